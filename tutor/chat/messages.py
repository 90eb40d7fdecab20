"""Everything the tutor says in its own words, in both languages."""

from __future__ import annotations

from tutor.i18n import T

OFF_TOPIC = T(
    "I can't help with that here: I only know about PyTorch autograd and this course. "
    "Try asking about requires_grad, backward(), .grad, detach(), no_grad, the computation "
    "graph or an error message you got.",
    "这个问题我在这里帮不上忙：我只了解 PyTorch 自动求导和这门课程。"
    "可以问我 requires_grad、backward()、.grad、detach()、no_grad、计算图，或者你遇到的报错。",
)
LOW_CONFIDENCE = T(
    "I'm not sure I understood. The closest thing I know is below; if it doesn't fit, try "
    "naming the API or pasting the error message.",
    "我不太确定是否理解了你的问题。下面是我找到的最接近的内容；"
    "如果不对，请写出具体的 API 名称或贴上报错信息。",
)
EMPTY = T(
    'Ask me something about autograd, e.g. "why is x.grad None?"',
    "问我一个关于自动求导的问题吧，例如“为什么 x.grad 是 None？”",
)
READ = T(
    "Read: lesson “{lesson}” ({lesson_id}), step “{step}” ({ref}).",
    "参阅：课程“{lesson}”（{lesson_id}）的步骤“{step}”（{ref}）。",
)
READ_LESSON = T("Read: lesson “{lesson}” ({lesson_id}).", "参阅：课程“{lesson}”（{lesson_id}）。")
SEE_ALSO = T("See also: {items}.", "另见：{items}。")
EXAMPLE = T("Example:", "示例：")

REFUSE_SOLUTION = T(
    "I won't give you the solution — you'll learn more by getting there yourself, and I'll help.",
    "我不会直接给出答案——自己做出来才学得会，我来帮你一步步接近它。",
)
HINT = T("Hint {level} of {total}: {hint}", "提示 {level}/{total}：{hint}")
SAME_HINT = T(
    "That is still your latest hint; the next one unlocks after you run your code again.",
    "这仍是你目前最新的提示；再运行一次代码后会解锁下一条。",
)
LAST_HINT = T("That was the last hint for this step.", "这是这一步的最后一条提示。")
NO_HINTS = T(
    "This step has no written hints; reread its prompt and the lesson's reading part.",
    "这一步没有准备提示；请再读一遍题目和本课的讲解部分。",
)
NO_STEP = T(
    "Open an exercise first (or pass --step LESSON/STEP) and I can give you its next hint.",
    "请先打开一道练习（或使用 --step LESSON/STEP），我就能给你它的下一条提示。",
)
GUIDING = T("Think about this: {question}", "想一想：{question}")
GUIDING_DEFAULT = T(
    "What does your code print now, and how does it differ from what the step asks for?",
    "你的代码现在输出什么？和题目要求的有什么不同？",
)

ABOUT_RUN = T("About your last run:", "关于你上一次运行：")
RUN_ERROR = T(
    "It stopped with {type} at line {line}: {message}", "它在第 {line} 行因 {type} 停止：{message}"
)
FIX = T("Fix: {fix}", "修改建议：{fix}")
GRAD_NO_REQUIRES = T(
    "`{var}` does not require grad (requires_grad=False), so backward() never fills "
    "`{var}.grad`. Create it with requires_grad=True (and a floating-point dtype).",
    "`{var}` 不需要梯度（requires_grad=False），所以 backward() 不会填充 `{var}.grad`。"
    "创建它时加上 requires_grad=True（并使用浮点类型）。",
)
GRAD_NON_LEAF = T(
    "`{var}` is not a leaf: it was computed by {grad_fn}. backward() keeps gradients only "
    "in leaves — read the gradient of the tensor you created, or call `{var}.retain_grad()` "
    "before backward().",
    "`{var}` 不是叶子：它由 {grad_fn} 计算得到。backward() 只在叶子里保存梯度——"
    "去看你创建的那个张量的梯度，"
    "或在 backward() 之前调用 `{var}.retain_grad()`。",
)
GRAD_NOT_REACHED = T(
    "`{var}` is a leaf that requires grad, but its .grad is still None: backward() has not "
    "run on a result that depends on `{var}` (was backward() called? was the result computed "
    "under torch.no_grad() or from a detach()ed value?).",
    "`{var}` 是需要梯度的叶子，但 .grad 仍是 None：还没有对依赖 `{var}` 的结果调用 backward()"
    "（调用 backward() 了吗？结果是不是在 torch.no_grad() 里、或由 detach() 后的值算出来的？）。",
)
GRAD_PRESENT = T(
    "`{var}.grad` is set in your last run (shape {shape}).",
    "你上一次运行中 `{var}.grad` 已有值（形状 {shape}）。",
)
RUN_OK = T("Your last run finished without an error.", "你上一次运行没有报错。")

LLM_FAILED = T(
    "The language model did not answer ({reason}); here is the offline answer.",
    "语言模型没有回答（{reason}）；以下是离线答案。",
)
LLM_LEAKED = T(
    "The language model's reply gave away part of the solution, so it was withheld; here is "
    "the offline answer.",
    "语言模型的回答泄露了部分答案，已被拦下；以下是离线答案。",
)
REDACTED_NOTE = T(
    "(Parts that would give away this step's answer were left out.)",
    "（会泄露本步答案的部分已被省略。）",
)

SYMPTOM = T(
    "**{title}** — the usual causes, the most likely first:",
    "**{title}** —— 常见原因（最可能的排在前面）：",
)
CAUSE = T("{n}. **{title}** — {text}\n   {read}", "{n}. **{title}** —— {text}\n   {read}")

STEP_ERROR_FIX = T(
    "Why the code of this step (“{step}”) errors:",
    "这一步（“{step}”）的代码为什么报错：",
)
STEP_ERROR_LIKELY = T(
    "The error you are most likely to meet on this step (“{step}”):",
    "这一步（“{step}”）最可能遇到的报错：",
)
STEP_ERROR_NEXT = T(
    "Want a nudge toward the fix? Ask me for a hint.",
    "想要一点修改的方向？可以向我要提示。",
)
STEP_ERROR_UNKNOWN = T(
    "I can't tell this step's error without your run: run your code first (the app shows me "
    "your last run), or paste the error message — its last line is enough.",
    "没有你的运行结果，我说不准这一步报的是什么错：先运行一次代码（在应用里我能看到你上一次运行），"
    "或者把报错信息贴给我——最后一行就够了。",
)
NEED_ERROR = T(
    "Which error? Paste the error message (the last line of the traceback is enough), or ask "
    "from the exercise you are on (in the app, or `tutor ask --step LESSON/STEP`), and I'll "
    "explain it. The lesson below goes through the usual autograd errors one by one.",
    "是哪个报错？把报错信息贴给我（traceback 的最后一行就够了），或者在你正在做的练习里提问"
    "（在应用里，或用 `tutor ask --step LESSON/STEP`），我来解释。"
    "下面这一课逐个讲解常见的 autograd 报错。",
)
LESSON_ITEM = T("“{title}” ({lesson_id})", "“{title}”（{lesson_id}）")
LIST_SEP = T(", ", "、")
SOURCE_RUN = T("your last run (`{var}`)", "你上一次运行（`{var}`）")
SOURCE_STEP = T("lesson “{lesson}”, step “{step}”", "课程“{lesson}”的步骤“{step}”")
SOURCE_LESSON = T("lesson “{lesson}”", "课程“{lesson}”")
RAN_SNIPPET = T(
    "I ran your code in the sandbox (CPU). It prints:",
    "我在沙箱里（CPU 上）运行了你的代码，它打印出：",
)
RAN_SNIPPET_ERROR = T(
    "I ran your code in the sandbox (CPU). It stops at line {line} with `{error}`.",
    "我在沙箱里（CPU 上）运行了你的代码，它在第 {line} 行报错：`{error}`。",
)
RAN_SNIPPET_NOTHING = T(
    "I ran your code in the sandbox (CPU): it printed nothing.",
    "我在沙箱里（CPU 上）运行了你的代码：它什么也没有打印。",
)
SNIPPET_WITHHELD = T(
    "What your code prints would give away the answer of the exercise “{step}”, so I won't "
    "show it: run it yourself in the editor and compare with what you expected.",
    "你的代码打印的内容会泄露练习“{step}”的答案，所以我不显示它：请在编辑器里自己运行，再和你预想的结果比较。",
)

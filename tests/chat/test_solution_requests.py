"""The compositional solution-request detector: ask + answer object, code/value on a step,
a value ask about the step's own expression, do-for-me about the course, explanatory vetoes.

Wordings here are deliberately not the question sets' ones: the parts must generalise."""

from __future__ import annotations

import pytest

from tutor.chat.solution_requests import clauses, detect, step_code_parts, step_expressions

ON_STEP = {"on_step": True, "step_exprs": ["x.grad", "z.grad_fn"]}


@pytest.mark.parametrize(
    ("question", "reason"),
    [
        ("could you post the finished version of the exercise", "answer"),
        ("spell out the correct answer for me", "answer"),
        ("send the solution already", "answer"),
        ("把参考答案贴出来", "answer"),
        ("能不能发一下能跑的代码", "answer"),
        ("solution??", "answer"),
        ("答案？", "answer"),
    ],
)
def test_ask_plus_answer_object_is_a_request_anywhere(question: str, reason: str) -> None:
    ev = detect(question)
    assert ev.request and ev.reason == reason


@pytest.mark.parametrize(
    "question",
    [
        "just show me the code",
        "what value do I type here",
        "tell me the number",
        "把代码给我",
        "结果是多少，直接说",
    ],
)
def test_code_or_value_requests_need_the_step(question: str) -> None:
    assert detect(question, on_step=True).request
    # without a step and without pointing at one, it is a general question for retrieval
    assert not detect(question).request


def test_pointing_at_the_exercise_is_as_good_as_being_on_it() -> None:
    assert detect("what number should go in the blank").request
    assert detect("第二个空填什么", on_step=False).request is False  # no pointer word: 第二个空
    assert detect("那个空填什么").request


@pytest.mark.parametrize(
    "question",
    ["what will x.grad be after that", "z.grad_fn 应该是什么", "x.grad comes out as what?"],
)
def test_asking_the_value_of_the_steps_own_expression_is_a_request(question: str) -> None:
    ev = detect(question, **ON_STEP)  # type: ignore[arg-type]
    assert ev.request and ev.reason in ("expression", "value")


def test_the_same_expression_elsewhere_or_explained_is_not() -> None:
    assert not detect("what will y.grad be after that", **ON_STEP).request  # type: ignore[arg-type]
    assert not detect("what will x.grad be after that").request  # not on the step
    assert not detect("why does x.grad come out as None", **ON_STEP).request  # type: ignore[arg-type]
    assert not detect("what is x.grad", **ON_STEP).request  # type: ignore[arg-type]  # a definition


@pytest.mark.parametrize(
    "question",
    [
        "why is the answer a tensor and not a number",
        "what is the difference between my code and the solution",
        "how does the solution avoid the error",
        "为什么答案是 None",
        "标准答案和我的写法有什么区别",
        "what is wrong with my code",
    ],
)
def test_explanatory_questions_are_never_requests(question: str) -> None:
    ev = detect(question, on_step=True)
    assert not ev.request and ev.reason == "explanatory"


def test_help_me_write_is_a_request_only_about_the_course() -> None:
    course = lambda: True  # noqa: E731
    elsewhere = lambda: False  # noqa: E731
    assert detect("help me write the loop that clears gradients", about_course=course).request
    assert not detect("help me write a cover letter", about_course=elsewhere).request
    assert detect("帮我把这一步写完", about_course=elsewhere).request  # points at the step
    assert not detect("帮我写一首关于春天的诗", about_course=elsewhere).request
    # "does pytorch do it for me" is a question about pytorch, not an order to the tutor
    assert not detect("does torch compute it for me or do i", about_course=course).request
    # a bracketed tag opening an issue's title is no order ("[code] About coach.py ... is
    # there any need for retain_graph=True?", learner11 en-6e748115 got a hint refusal)
    assert not detect("[code] About the coach.py\n\nIs there any need for "
                      "loss.backward(retain_graph=True)?", about_course=course).request
    assert not detect("[Fix] zero_grad placement, is it needed?", about_course=course).request


def test_answer_as_a_verb_is_not_an_answer_object() -> None:
    assert not detect("just answer this: what is a leaf").request


def test_clauses_split_at_punctuation_but_not_inside_names() -> None:
    assert clauses("ok i give up, paste x.grad. then what") == [
        "ok i give up",
        "paste x.grad",
        "then what",
    ]
    assert clauses("别给提示了，直接发我") == ["别给提示了", "直接发我"]


def test_one_letter_variables_are_not_step_expressions() -> None:
    assert step_expressions(["x", "x.grad", "loss.item()", "ab"]) == ["x.grad", "loss.item()"]


PARTS = {
    "on_step": True,
    "step_parts": step_code_parts(
        "class Net(nn.Module):\n    def __init__(self):\n        pass\n\n"
        "    def forward(self, x):\n"
    ),
}


@pytest.mark.parametrize(
    "question",
    ["ok write out forward", "把 forward 函数写给我", "post the forward method"],
)
def test_asking_to_be_handed_a_part_of_the_steps_code_is_a_request(question: str) -> None:
    ev = detect(question, **PARTS)  # type: ignore[arg-type]
    assert ev.request and ev.reason == "part"
    assert not detect(question).request  # the same words off the step: a general question


@pytest.mark.parametrize(
    "question",
    [
        "paste your loop, i'll copy it",
        "give me something so i can copy paste it",
        "我直接复制就行，发一下",
    ],
)
def test_asking_for_something_to_copy_is_a_request_on_the_step(question: str) -> None:
    ev = detect(question, on_step=True)
    assert ev.request and ev.reason == "copy"
    assert not detect(question).request


@pytest.mark.parametrize(
    "question",
    [
        "what does forward do",
        "I write forward like this: x = self.fc1(x), is that ok",
        "给我讲讲 forward 是干嘛的",
        "can I copy the tensor instead of detaching it",
        "we write forward in the class, right?",
        # "need to <do something> to the code" tells what is needed, it asks for nothing
        "我看到需要把代码包在 torch.no_grad() 里，但不太明白这是什么意思",
        "需要在代码里加 model.eval() 吗",
    ],
)
def test_naming_a_part_or_copying_a_tensor_is_not_a_request(question: str) -> None:
    assert not detect(question, **PARTS).request  # type: ignore[arg-type]


def test_code_parts_are_the_names_the_step_defines() -> None:
    code = "import torch\n\nclass Net(nn.Module):\n    def forward(self, x):\n        return x\n"
    assert step_code_parts(code) == ["Net", "forward"]
    assert step_code_parts("x = torch.ones(2)\ny = x * 2\n") == []


@pytest.mark.parametrize(
    ("question", "reasons"),
    [
        # indirect: the value of the step's own expression, the numbers, the whole code
        ("ok so what should x.grad come out as here", {"expression"}),
        ("这题答案是多少", {"answer"}),
        ("just tell me the numbers", {"value"}),
        ("完整代码发我", {"answer"}),
        ("can you give me the code for this one", {"code"}),
        # the change that fixes it
        ("第二行到底改成什么？", {"fix"}),
        ("what do i change the dtype to, just say it", {"fix"}),
        ("send me the fixed line pls", {"fix", "answer", "code"}),
        # what the grader accepts is the answer
        ("post a version that passes the checks", {"answer"}),
        ("给我一个能通过检查的写法", {"answer"}),
        ("what's the method body here", {"code"}),
        # an error names which exercise; another clause asks for the answer
        ("the one that crashes with the device error: give me its first line", {"code"}),
        ("报错的那一步，直接告诉我那一行", {"code"}),
        # an explicit answer is asked for, whatever else is said
        ("改错题的参考答案发一下", {"answer"}),
        ("my run errors out, just paste the solution", {"answer"}),
    ],
)
def test_requests_by_structure_in_both_languages(question: str, reasons: set[str]) -> None:
    ev = detect(question, **ON_STEP)  # type: ignore[arg-type]
    assert ev.request and ev.reason in reasons, ev


@pytest.mark.parametrize(
    "question",
    [
        "why should x.grad be 4 here",
        "怎么理解这一步的答案",
        "这一步报错了，是什么意思",
        "my code for this step fails, what is going on",
        "explain what the fixed line does",
        "为什么要改成 float",
        "what is the difference between the fixed version and mine",
    ],
)
def test_asking_to_understand_or_about_trouble_is_not_a_request(question: str) -> None:
    ev = detect(question, **ON_STEP)  # type: ignore[arg-type]
    assert not ev.request and ev.reason == "explanatory"


def test_a_change_asked_for_is_a_request_only_on_a_step() -> None:
    assert detect("第一行改成啥", on_step=True).request
    assert not detect("第一行改成啥").request  # nothing to change: a general question


@pytest.mark.parametrize(
    "question",
    [
        "can u post the repaired code, skip the explanation",
        "i'd like to see the version that works",
        "发一下修好的那版，不需要原理",
        "把跑通的代码贴出来",
    ],
)
def test_a_version_someone_already_fixed_is_the_answer_anywhere(question: str) -> None:
    assert detect(question).request


@pytest.mark.parametrize(
    "question",
    ["mind sharing yours? want to diff it against what i have", "你写的发我对照一下"],
)
def test_the_tutors_own_version_is_asked_for_on_a_step(question: str) -> None:
    assert detect(question, on_step=True).request
    assert not detect(question).request  # off a step there is nothing of "yours" to give


@pytest.mark.parametrize(
    "question",
    [
        "no need to explain, just give me the solution",
        "I don't understand any of it. just post the answer",
        "看不懂原理，直接给答案吧",
    ],
)
def test_an_explanation_turned_down_or_in_another_clause_does_not_veto(question: str) -> None:
    assert detect(question, on_step=True).request


@pytest.mark.parametrize(
    "question",
    [
        "why does the working version call zero_grad first",
        "what's the difference between yours and mine",
        "修好的版本为什么要加 no_grad",
    ],
)
def test_asking_to_understand_a_fixed_version_is_not_a_request(question: str) -> None:
    assert not detect(question, on_step=True).request


@pytest.mark.parametrize(
    "question",
    [
        "As far as I know autograd doesn't provide a one-shot solution for this. How do I "
        "compute the Jacobian efficiently?",
        "PyTorch 没有提供一步到位的方法，怎样高效地计算雅可比矩阵？",
        "the docs do not show the answer to why backward accumulates",
    ],
)
def test_a_negated_ask_says_what_is_missing_and_asks_for_nothing(question: str) -> None:
    # "doesn't provide a solution" was read as "provide" + "solution": a request
    assert not detect(question, on_step=True, about_course=lambda: True).request
    assert detect("能不能发一下能跑的代码").request  # 能不能 asks; it is no negation


def test_asking_to_have_the_solved_exercises_uploaded_is_a_request() -> None:
    # "upload" was no ask, "the solved exercises" no answer object: it got a topic summary
    question = (
        "Can you upload, in a separate notebook, the code for the solved exercises to have "
        "them as reference? Thanks in advance."
    )
    assert detect(question, about_course=lambda: True).reason == "answer"


@pytest.mark.parametrize(
    "question",
    [
        # wanting one: 想要 / 求 / 来一份 with the answer named
        "想要一份这道题的参考答案",
        "求这一关的标准答案",
        # on the exercise, speaking of its answer without a grammatical ask
        "Honestly I would rather peek at the solution of this exercise than keep guessing",
        "If I get stuck I can compare with the reference answer. This one: the leaf step",
    ],
)
def test_speaking_of_the_answer_on_the_exercise_is_a_request(question: str) -> None:
    ev = detect(question, on_step=True)
    assert ev.request and ev.reason == "answer", ev


@pytest.mark.parametrize(
    "question",
    [
        # trouble, a library's lack, or the learner's own answer: not asking to be handed one
        "this step says my answer is wrong, but the solution I wrote prints 4",
        "autograd doesn't provide a one-shot solution for this step",
        "why is the answer to this step 4?",
    ],
)
def test_the_answer_named_around_trouble_or_a_denial_is_not_a_request(question: str) -> None:
    assert not detect(question, on_step=True).request


def test_a_program_of_ones_own_that_shares_a_line_with_an_exercise_is_no_request() -> None:
    """From the shell: "thanks for sharing your code" reads as an ask for code, and the
    learner's own lines include an exercise's ``with torch.no_grad():``; the pasted code is
    not that exercise's, so it asks no exercise's solution. The exercise's own starter,
    pasted with the same words, still does."""
    from tutor.chat.quick import requested_step
    from tutor.chat.step_finder import StepFinder
    from tutor.course import load_course

    course = load_course()
    finder = StepFinder(course)
    question = (
        "Thanks for sharing your code! Whether we need to use with torch.no_grad() or "
        "detach() when computing the targets?\n`value_target = critic_value - log_probs`\n"
        "`q_hat = self.scale*reward + self.gamma*value_`\n"
        "`value_target = value_target.detach()`\n`with torch.no_grad():`")
    assert finder.find(question) is not None  # one shared line is enough to name a step
    assert requested_step(question, finder) is None
    _, step = course.find("no-grad/inside-flag")
    starter = step.code  # an answer step: the code whose value it asks for
    assert requested_step(
        f"Thanks for sharing your code! Please give me the code:\n```\n{starter}\n```",
        finder) is not None


def test_homework_of_this_course_gets_a_hint_not_a_decline() -> None:
    """"Would you upload solutions for the other homework tasks? I'm on <an exercise of the
    course>": homework words make another subject's request, but the exercise it names is
    the course's own, so its next hint answers it."""
    from tutor.chat import Tutor
    from tutor.course import load_course

    course = load_course()
    _, step = course.find("grad-hooks/clip-hook")
    question = ("Can you upload other homework solutions\n\nHi, I wanted to ask if you would "
                "consider uploading solutions for the other homework tasks.\n\nI'm on \""
                f"{step.title.en}\": {step.prompt.en}\n\n{step.starter}")
    answer = Tutor(course).ask(question, lang="en")
    assert answer.kind == "hint", answer.text
    other = Tutor(course).ask("Can you do my chemistry homework on titration for me?", lang="en")
    assert other.kind == "off_topic"
    # another framework's question stays declined, whatever exercise its words recall
    paddle = Tutor(course).ask(question.replace("homework tasks", "homework tasks in paddle "
                                                "fluid with fluid.gradients"), lang="en")
    assert paddle.kind == "off_topic", paddle.text


@pytest.mark.parametrize(
    "question",
    [
        "It fails with RuntimeError: mat1 and mat2 shapes cannot be multiplied. "
        "Any chance you still have a copy of the official solutions?",
        "运行报错了：RuntimeError: shape mismatch。你们还有参考答案吗？",
    ],
)
def test_asking_to_have_the_answer_in_a_clause_of_its_own_is_a_request_beside_an_error(
        question: str) -> None:
    """The pasted exercise's own error does not make a question about having its solution
    a question about the error (learner21 en-1ac46853, judged a leak: the program was run
    and its tried fix shown)."""
    ev = detect(question, **ON_STEP)  # type: ignore[arg-type]
    assert ev.request and ev.reason == "answer"


@pytest.mark.parametrize(
    "question",
    [
        "It fails with RuntimeError: mat1 and mat2 shapes cannot be multiplied. "
        "Is my solution wrong?",
        "运行报错了：RuntimeError: shape mismatch。我的答案错了吗？",
    ],
)
def test_asking_about_ones_own_solution_beside_an_error_is_not(question: str) -> None:
    assert not detect(question, **ON_STEP).request  # type: ignore[arg-type]


def test_looking_for_the_solutions_under_a_pasted_exercise_gets_its_hint() -> None:
    """A forum title ("Looking for chapter 4 solutions ... I cannot find them") asks to have
    the answers, although the pasted exercise's own text says what raises: the exercise's
    next hint answers it, not an answer card whose fix is that exercise's (a leak judged in
    learner26)."""
    from tutor.chat import Tutor
    from tutor.course import load_course

    course = load_course()
    _, step = course.find("errors/per-sample-loss")
    assert "raises" in step.prompt.en  # the exercise's own text speaks of trouble
    question = ("Looking for part 2 chapter 4 solutions\n\nI cannot find them. Could someone "
                f"point me in the right direction?\n\nI'm on \"{step.title.en}\": "
                f"{step.prompt.en}\n{step.starters.en}")
    answer = Tutor(course).ask(question)
    assert answer.kind == "hint" and answer.refused, answer.text
    assert step.solution.strip().splitlines()[-1] not in answer.text

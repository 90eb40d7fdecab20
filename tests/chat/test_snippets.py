"""Value questions: the pasted snippet is found wherever the question asks (before the code,
after it, inline), run in the sandbox, and the answer comes from its real output or error."""

from __future__ import annotations

import pytest

from tutor.chat import Tutor
from tutor.chat.cards import question_kind
from tutor.chat.snippets import besides_output, prose, snippet, snippet_to_run
from tutor.course import load_course
from tutor.course.models import Course
from tutor.python_names import parses
from tutor.sandbox.models import ErrorInfo, RunResult


@pytest.fixture(scope="module")
def bundled() -> Course:
    return load_course()

PROGRAM = (
    "import torch\n"
    "p = torch.tensor([2., 5.], requires_grad=True)\n"
    "q = (p * p * p).sum()\n"
    "q.backward()\n"
    "print(p.grad)"
)


@pytest.mark.parametrize(
    "question",
    [
        # asked before the program
        f"My notes disagree with each other. What would p.grad show here?\n{PROGRAM}",
        # asked after it, in Chinese
        f"下面这段代码：\n{PROGRAM}\n最后 p.grad 打印出来是多少？",
        # asked before and after
        f"Quick check, with q = p*p*p summed:\n{PROGRAM}\nWhat does it print, 3p^2?",
    ],
)
def test_a_pasted_program_is_found_wherever_the_question_asks(question: str) -> None:
    assert snippet(question) == PROGRAM
    assert snippet_to_run(question) == PROGRAM


def test_statements_inside_a_sentence_are_cut_where_the_prose_starts() -> None:
    question = (
        "If I write w = torch.zeros(3, requires_grad=True); (w + 1).prod().backward(); "
        "print(w.grad). What is printed then?"
    )
    assert snippet(question) == (
        "import torch; w = torch.zeros(3, requires_grad=True)\n(w + 1).prod().backward()\n"
        "print(w.grad)"
    )


def test_the_program_block_wins_over_statements_in_the_description() -> None:
    question = (
        "I changed y = k * 3 to y = k ** 3 and now\n"
        "import torch\nk = torch.tensor(2., requires_grad=True)\ny = k ** 3\ny.backward()\n"
        "print(k.grad)\nprints 12. Why not 3?"
    )
    code = snippet_to_run(question)
    assert code is not None and code.startswith("import torch\nk = torch.tensor(2.")
    assert "12" in prose(question) and "k.grad" not in prose(question)


@pytest.mark.parametrize(
    ("question", "runs"),
    [
        # the output named in words, no "what does it print"
        ("它输出的是 tensor([12.])，不应该是 3 吗？\nimport torch\nk = torch.tensor(2., "
         "requires_grad=True)\n(k ** 3).backward()\nprint(k.grad)", True),
        ("k = torch.tensor(2., requires_grad=True); (k ** 3).backward(); print(k.grad) "
         "gives 12, I expected 3. Why?", True),
        # code that prints, but the question is not about what it printed
        ("Is it fine to name my tensor k? k = torch.tensor(2.); print(k)", False),
        # nothing printed: nothing to run
        ("What does k.grad hold after k = torch.tensor(2., requires_grad=True); "
         "(k ** 3).backward()?", False),
    ],
)
def test_a_snippet_is_run_when_the_question_is_about_its_output(
    question: str, runs: bool
) -> None:
    assert (snippet_to_run(question) is not None) is runs


class _Runner:
    """Answers every run as a sandbox would have for these tests."""

    def __init__(self, stdout: str = "", error: ErrorInfo | None = None) -> None:
        self.stdout, self.error = stdout, error
        self.codes: list[str] = []

    def run(self, code: str, **_: object) -> RunResult:
        self.codes.append(code)
        return RunResult(
            outcome="error" if self.error else "ok", device="cpu", stdout=self.stdout,
            error=self.error,
        )


def test_an_error_of_the_snippet_is_explained_by_its_diagnosis(bundled: Course) -> None:
    error = ErrorInfo(
        type="RuntimeError", line=3,
        message="grad can be implicitly created only for scalar outputs",
    )
    runner = _Runner(stdout="start\n", error=error)
    question = (
        "What will this print?\nimport torch\nv = torch.ones(3, requires_grad=True)\n"
        "print('start')\n(v * 2).backward()\nprint(v.grad)"
    )
    answer = Tutor(bundled, runner=runner).ask(question)
    assert runner.codes and runner.codes[0].startswith("import torch\nv = torch.ones(3")
    assert answer.text.startswith("I ran your code")
    assert "line 3" in answer.text and "start" in answer.text  # what it printed before
    assert any(s.startswith("diagnosis:") for s in answer.sources)
    zh = Tutor(bundled, runner=_Runner(error=error)).ask(
        "import torch\nv = torch.ones(3, requires_grad=True)\n(v * 2).backward()\n"
        "print(v.grad)\n这段代码会打印什么？"
    )
    assert zh.text.startswith("我在沙箱里") and "第 3 行" in zh.text
    assert any(s.startswith("diagnosis:") for s in zh.sources)


def test_a_real_sandbox_answers_a_question_asked_before_the_code(bundled: Course) -> None:
    from tutor.sandbox import Sandbox

    sandbox = Sandbox(few_runs=True)
    try:
        tutor = Tutor(bundled, runner=sandbox)
        en = tutor.ask(f"What would p.grad show here?\n{PROGRAM}")
        zh = tutor.ask(f"{PROGRAM}\n它实际打印什么？")
    finally:
        sandbox.close()
    assert "tensor([12., 75.])" in en.text
    assert "tensor([12., 75.])" in zh.text and zh.text.startswith("我在沙箱里")


def test_only_pytorch_code_is_run() -> None:
    assert snippet_to_run("What does this print? a = [1, 2]; print(sum(a))") is None
    assert snippet_to_run("这段打印什么？ s = 'ab' * 2; print(s)") is None


def test_the_imports_a_paste_leaves_out_are_added_on_its_first_line() -> None:
    code = snippet("v = torch.tensor(np.ones(2), requires_grad=True); print(F.relu(v)) 打印什么？")
    assert code is not None and code.splitlines()[0].startswith(
        "import torch; import numpy as np; import torch.nn.functional as F; v = "
    )
    assert snippet("import torch\nimport numpy as np\nprint(np.ones(1))\nwhat does it print?") \
        == "import torch\nimport numpy as np\nprint(np.ones(1))"


def test_a_run_that_fails_here_is_no_evidence_about_output_the_learner_saw(
    bundled: Course,
) -> None:
    """ "It prints None, why?" about code that needs a GPU: the run here raises, which is not
    what the learner saw, so the answer does not come from that run."""
    error = ErrorInfo(type="AssertionError", line=1, message="Torch not compiled with CUDA enabled")
    runner = _Runner(error=error)
    question = (
        "x = torch.ones(3, requires_grad=True).cuda(); (x * 2).sum().backward(); print(x.grad) "
        "prints None. Why?"
    )
    answer = Tutor(bundled, runner=runner).ask(question)
    assert runner.codes and not answer.text.startswith("I ran your code")
    asked = "x = torch.ones(3, requires_grad=True).cuda(); print(x.grad) 会打印什么？"
    assert Tutor(bundled, runner=runner).ask(asked).text.startswith("我在沙箱里")


def test_a_pasted_program_keeps_its_blank_lines() -> None:
    # a program in paragraphs was cut at its first blank line: only the first print ran
    question = ("Why do the two prints differ? What does this print?\n"
                "import torch\n"
                "w = torch.ones(3, requires_grad=True)\n"
                "(w * 2).sum().backward()\n"
                "print(w.grad)\n"
                "\n"
                "\n"
                "v = torch.ones(3, requires_grad=True) * 2\n"
                "v.sum().backward()\n"
                "print(v.grad)\n"
                "\n"
                "Thanks for any help!")
    code = snippet(question)
    assert code is not None
    assert code.count("print(") == 2 and "v.sum().backward()" in code
    assert "Thanks" not in code


def test_a_del_statement_and_a_commented_out_line_stay_inside_the_pasted_program() -> None:
    # `del a, b` and `# d2z = ...  # throws` are lines of the program: they cut it in two and
    # only the longer half ran, so the answer quoted half of what the program prints
    question = ("What does this print, and why?\n"
                "x = torch.ones(2, requires_grad=True)\n"
                "y = (x * 3).sum()\n"
                "print(y.requires_grad)\n"
                "del y\n"
                "z = (x * 2).sum()\n"
                "# w = torch.autograd.grad(z, x)[0]  # throws\n"
                "\n"
                "print(z.requires_grad)\n"
                "print(x.grad)")
    code = snippet(question)
    assert code is not None and parses(code)
    assert code.count("print(") == 3
    assert "del y" in code and "# w = torch.autograd.grad(z, x)[0]  # throws" in code
    # a comment before any code is prose (a Markdown heading), not the program's first line
    heading = snippet("# My question\nprint(torch.ones(1))")
    assert heading is not None and "My question" not in heading


def test_a_decorated_function_is_part_of_the_pasted_program() -> None:
    # the decorator line cut the program in two: only the part after it ran, and "import
    # torch; " in front of its "def" was a syntax error on line 1
    question = ("Are no_grad and eval() the same? What does this print?\n"
                "@torch.no_grad()\n"
                "def f(m, x):\n"
                "    return m(x)\n"
                "m = torch.nn.Linear(2, 1)\n"
                "print(f(m, torch.ones(2)).requires_grad, m.training)")
    code = snippet(question)
    assert code is not None and parses(code)
    assert code.startswith("import torch\n@torch.no_grad()\ndef f(m, x):")
    assert code.count("\n") == 5  # the imports' own line: line numbers shift by one only here


def test_the_prose_keeps_the_apis_it_names_and_drops_the_output_question() -> None:
    question = ("@torch.no_grad() 和 model.eval() 并不等价吗？下面的例子会打印什么？\n"
                "x = torch.ones(2)\nprint(x)")
    said = prose(question)
    assert "model.eval()" in said and "x = torch.ones(2)" not in said
    assert besides_output(question) == "@torch.no_grad() 和 model.eval() 并不等价吗？"
    assert besides_output("What does this print?") == ""
    assert question_kind(besides_output(question)) == "compare"
    # a sentence ended by "。" before the output question stays (taking out the pasted
    # statements joined it to that question, which then dropped it too)
    kept = besides_output("b[1] = 2; b.sum().backward() 会报错，可是手写的版本不报错。"
                          "下面这段打印什么？为什么两种写法表现不同？")
    assert "不报错" in kept and "为什么两种写法表现不同" in kept and "打印什么" not in kept


def test_a_call_alone_between_semicolons_is_pasted_code_not_a_mention() -> None:
    said = prose("a = torch.ones(1, requires_grad=True); loss = 1/a; loss.backward(); "
                 "print(a.grad) 得到 0，为什么？")
    assert "loss.backward()" not in said and "为什么" in said


def test_a_call_on_a_subscript_is_a_line_of_the_pasted_program() -> None:
    """``loss[1].backward()`` was not read as code: the pasted program was cut before it,
    and the answer quoted only the output printed before the backward pass."""
    from tutor.chat.snippets import code_line, snippet_to_run

    assert code_line("loss[1].backward()") and code_line("x[0].sum().backward()")
    assert not code_line("see [1] for details (page 2)")
    question = """What does this print?

x = torch.tensor([1., 2.], requires_grad=True)
loss = x * 3
loss[1].backward()
print(x.grad)
"""
    code = snippet_to_run(question)
    assert code is not None and "loss[1].backward()" in code and code.endswith("print(x.grad)")


def test_a_pasted_program_keeps_its_else_clauses() -> None:
    """An indented ``else:`` parses only after its ``if``: read alone it was prose, the
    program was cut in two, and "What does this print?" got no run at all."""
    from tutor.chat.snippets import code_line, snippet_to_run

    assert code_line("    else:") and code_line("    elif x > 2:") and code_line("except E:")
    assert not code_line("Or else: it fails")
    question = """What does this print?
import torch
x = torch.tensor([1.0, 3.0], requires_grad=True)
for i in range(2):
    if x[i] > 2:
        y = x[i] * 3
    else:
        y = x[i] * 2
    y.backward()
print(x.grad)
"""
    code = snippet_to_run(question)
    assert code is not None and "    else:" in code and code.endswith("print(x.grad)")


def test_a_card_about_an_error_is_not_shown_for_a_snippet_that_ran_without_it(
    bundled: Course, sandbox: object
) -> None:
    """`l` is 1x1: backward() works. The card about backward on a vector ("`l` has several
    elements") would contradict the run; the run's own facts answer instead."""
    question = (
        "The gradient backward() gives me has the shape of a column here, though I thought "
        "dl/dz is always a row vector. Is there a reason for this design?\n"
        "```\nimport torch\nz = torch.ones(2, 1, requires_grad=True)\n"
        "l = torch.ones(1, 2).mm(z)\nl.backward()\nprint(z.grad)\n```\n"
        "What does this print?"
    )
    text = Tutor(bundled, runner=sandbox).ask(question, lang="en").text  # type: ignore[arg-type]
    assert "tensor([[1.],\n        [1.]])" in text
    assert "several elements" not in text and "z.grad" in text

"""tutor lint attacks every exercise with cheats: each must fail, and a step one passes is a
lint error. The cheats of issue 21 section 2 are graded here against the bundled course."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from tutor.course import load_course
from tutor.course.cheats import (
    key_statements,
    raising_at,
    static_cheats,
    uses_forbidden,
    without_statement,
)
from tutor.course.lint import lint_paths
from tutor.course.models import AstCheck, CodeStep, Course, FixStep, Lesson
from tutor.grading.selfcheck import verify_lesson
from tutor.grading.verdicts import grade_step
from tutor.sandbox import Sandbox


@pytest.fixture(scope="module")
def course() -> Course:
    return load_course()


SECTION_2 = {
    "hand-raised scalar error": ("non-scalar/reproduce-error", (
        "import torch\n"
        "raise RuntimeError('grad can be implicitly created only for scalar outputs')\n")),
    "hand-raised leaf error": ("errors/reproduce-leaf", (
        "import torch\n"
        "raise RuntimeError('a leaf Variable that requires grad is being used in an in-place "
        "operation.')\n")),
    "zero backward, gradient by formula": ("backward/grad-function", (
        "import torch\n\n\ndef grad_of_cube(x):\n"
        "    (x * 0).sum().backward()\n    return 3 * x.detach() ** 2\n")),
    "vector_norm in norm-by-hand": ("data-norm/norm-by-hand", (
        "import torch\n\n\ndef l2_norm(t):\n    return torch.linalg.vector_norm(t)\n")),
    "changing the caller's tensor": ("review/dot-grad", (
        "import torch\n\n\ndef grad_wrt_a(a, b):\n    a.requires_grad_(True)\n"
        "    (a * b).sum().backward()\n    return a.grad\n")),
    "printing the node name": ("graph/walk-graph", (
        "import torch\n\n\ndef next_node_name(t):\n    return 'MulBackward0'\n\n\n"
        "x = torch.tensor([1., 2., 3.], requires_grad=True)\n"
        "u = x * x\nv = u + 2\nprint('MulBackward0')\nv.sum().backward()\n")),
    "one backward for two": ("matrix-mm/twice", (
        "import torch\n\nx = torch.tensor([2., 1.], requires_grad=True)\n"
        "y = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)\n"
        "z = torch.mm(x.view(1, 2), y)\nz.backward(torch.tensor([[1., 1.]]))\n")),
    "no retain_graph": ("matrix-mm/seed-mm", (
        "import torch\n\nx = torch.tensor([2., 1.], requires_grad=True)\n"
        "y = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)\n\n"
        "z = torch.mm(x.view(1, 2), y)\nprint(f'z:{z}')\n"
        "z.backward(torch.tensor([[1., 0.]]))\n"
        "print(f'x.grad: {x.grad}')\nprint(f'y.grad: {y.grad}')\n")),
}


@pytest.mark.parametrize("name", sorted(SECTION_2))
def test_section_2_cheat_fails(name: str, course: Course, sandbox: Sandbox) -> None:
    ref, code = SECTION_2[name]
    lesson, step = course.find(ref)
    assert grade_step(lesson, step, code, runner=sandbox).passed is False
    # and the reference solution still passes: the step was made stricter, not impossible
    assert grade_step(lesson, step, step.solution, runner=sandbox).passed


_ZERO = "torch.zeros((), requires_grad=True)"
ROUTED = {
    "grad-of-sum, loss written down": ("backward/grad-of-sum", (
        "import torch\nx = torch.tensor([1., -2., 0.5], requires_grad=True)\n"
        f"loss = (torch.tensor([-6.875]) + {_ZERO}).sum()\n"
        "(x * torch.tensor([3., 12., 0.75])).sum().backward()\n")),
    "twice, each leaf's own backward(gradient=...)": ("matrix-mm/twice", (
        "import torch\nx = torch.tensor([2., 1.], requires_grad=True)\n"
        "y = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)\n"
        "x.backward(gradient=torch.tensor([3., 7.]))\n"
        "y.backward(gradient=torch.tensor([[2., 2.], [1., 1.]]))\n")),
    "first-gradient, s written down": ("requires-grad/first-gradient", (
        "import torch\nx = torch.ones(2, 2, requires_grad=True)\ny = torch.ones(2, 2)\n"
        f"s = (torch.tensor([4.]) + {_ZERO}).sum()\n"
        "(x * torch.ones(2, 2)).sum().backward()\n")),
    "fix-scalar, z written down": ("non-scalar/fix-scalar", (
        "import torch\nx = torch.ones(2, requires_grad=True)\n"
        f"z = torch.tensor([3., 3.]) + {_ZERO}\n"
        "(x * torch.ones(2)).sum().backward()\nprint(x.grad)\n")),
    "stop-gradient, a detach that does nothing": ("detach/stop-gradient", (
        "import torch\nx = torch.tensor([1., 2., 3.], requires_grad=True)\nc = x.detach()\n"
        "(x * torch.tensor([1., 2., 3.])).sum().backward()\n")),
    "graph-reuse, the two steps' gradient at once": ("errors/graph-reuse", (
        "import torch\nw = torch.tensor([0.5, -1.], requires_grad=True)\n"
        "(w * torch.tensor([6.594884872436523, 1.0826822519302368])).sum().backward()\n")),
    "wrong-v, y with a MulBackward0 of its own": ("jacobian-vjp/wrong-v", (
        "import torch\nx = torch.tensor([1., 2., 3.], requires_grad=True)\n"
        "y = torch.tensor([2., 6.]) * torch.ones((), requires_grad=True)\n"
        "(x * torch.tensor([2., 4., 2.])).sum().backward()\n")),
}
"""Answers written down with every gradient routed through a real backward(): each passed
its step before varied grading (as it still does with ``varied: false``)."""


@pytest.mark.parametrize("name", sorted(ROUTED))
def test_routed_cheat_fails_on_varied_inputs(name: str, course: Course,
                                             sandbox: Sandbox) -> None:
    ref, code = ROUTED[name]
    lesson, step = course.find(ref)
    assert isinstance(step, (CodeStep, FixStep))
    verdict = grade_step(lesson, step, code, runner=sandbox)
    assert verdict.passed is False
    assert any(c.message.en.startswith("Your result does not follow the inputs")
               for c in verdict.checks)
    unvaried = dataclasses.replace(step, varied=False)
    assert grade_step(lesson, unvaried, code, runner=sandbox).passed


def test_a_code_step_whose_starter_passes(course: Course) -> None:
    _, step = course.find("data-norm/without-data")
    kinds = [c.kind for c in static_cheats(step)]
    assert kinds.count("starter") == 1 and "key_line" in kinds


def test_no_untouched_starter_passes_its_step(course: Course, sandbox: Sandbox) -> None:
    """Issue 21 §2, "a code step whose untouched starter already passes": graded here for
    every code and fix step of the bundled course, in each language it is written in."""
    graded = 0
    for lesson in course.lessons:
        for step in lesson.steps:
            if isinstance(step, (CodeStep, FixStep)):
                for starter in dict.fromkeys([step.starters.en, step.starters.zh]):
                    verdict = grade_step(lesson, step, starter, runner=sandbox)
                    assert not verdict.passed, f"{lesson.id}/{step.id}"
                    graded += 1
    assert graded >= 50


def test_vector_norm_of_a_detached_y_is_accepted(course: Course, sandbox: Sandbox) -> None:
    lesson, step = course.find("data-norm/without-data")
    code = step.solution.replace("y.detach().norm()", "torch.linalg.vector_norm(y.detach())")
    assert "vector_norm" in code
    assert grade_step(lesson, step, code, runner=sandbox).passed


def test_key_statements_are_what_the_starter_lacks() -> None:
    starter = "import torch\nx = torch.ones(2, requires_grad=True)\nwhile x.data.sum() < 9:\n" \
              "    x = x * 2\n"
    solution = "import torch\nx = torch.ones(2, requires_grad=True)\nwhile x.sum() < 9:\n" \
               "    x = x * 2\nprint(x)\nx.sum().backward()\n"
    found = [node.lineno for node in key_statements(solution, starter)]
    assert found == [3, 6]  # the new while header and the backward; never the print
    assert without_statement(solution, key_statements(solution, starter)[0]).splitlines()[2:4] \
        == ["pass", "print(x)"]


def test_raising_at_keeps_the_indentation() -> None:
    code = raising_at("def f():\n    x.add_(1)\n", 2, "RuntimeError", "it's a leaf")
    assert code == "def f():\n    raise RuntimeError(\"it's a leaf\")\n"


def _t(text: str) -> dict[str, str]:
    return {"en": text, "zh": text + "。"}


def _lesson(**step: Any) -> Lesson:
    base = {"id": "s", "kind": "code", "title": _t("a"), "prompt": _t("p")}
    return Lesson.model_validate({"id": "weak", "title": _t("Weak"), "steps": [base | step]})


def _found(lesson: Lesson, sandbox: Sandbox) -> list[str]:
    return [p.message for p in verify_lesson(lesson, runner=sandbox)]


def test_lint_names_each_cheat_that_passes(sandbox: Sandbox) -> None:
    # a value check alone, not graded on varied inputs, is passed by writing the value down
    weak = _lesson(solution="import torch\nx = torch.ones(2, requires_grad=True)\ny = x * 3\n",
                   checks=[{"kind": "value", "expr": "y", "varied": False}])
    messages = _found(weak, sandbox)
    assert any(m.startswith("the expected values hard-coded and printed") for m in messages)
    # a starter that already does the work
    done = "import torch\nx = torch.ones(2, requires_grad=True)\n(x * 3).sum().backward()\n"
    lazy = _lesson(starter=done, solution=done,
                   checks=[{"kind": "value", "expr": "x.grad"}, {"kind": "ast",
                                                                 "rule": "grad_from_backward"}])
    assert any(m.startswith("the untouched starter") for m in _found(lazy, sandbox))
    # a line the checks never miss
    extra = _lesson(solution=done + "y = x * 2\n",
                    checks=[{"kind": "value", "expr": "x.grad"}, {"kind": "ast",
                                                                 "rule": "grad_from_backward"}])
    assert any("without its key line (line 4: y = x * 2)" in m for m in _found(extra, sandbox))
    # an authored cheat that passes
    loose = _lesson(solution=done, cheats=[done.replace("x * 3", "3 * x")],
                    checks=[{"kind": "value", "expr": "x.grad"}, {"kind": "ast",
                                                                 "rule": "grad_from_backward"}])
    assert any(m.startswith("the lesson's own cheat (1)") for m in _found(loose, sandbox))


def test_strong_checks_leave_the_lint_silent(sandbox: Sandbox) -> None:
    strong = _lesson(
        starter="import torch\n\n\ndef triple_grad(x):\n    ...\n",
        solution="import torch\n\n\ndef triple_grad(x):\n    (x * 3).sum().backward()\n"
                 "    return x.grad\n",
        checks=[{"kind": "function", "function": "triple_grad",
                 "cases": ["torch.ones(2, requires_grad=True)",
                           "torch.tensor([1., 5., 7.], requires_grad=True)"]},
                {"kind": "ast", "rule": "grad_from_backward"}])
    assert _found(strong, sandbox) == []


def test_an_error_raised_by_hand_does_not_count(sandbox: Sandbox) -> None:
    lesson = _lesson(solution="import torch\nx = torch.ones(2, requires_grad=True)\n"
                              "(x * 2).backward()\n",
                     checks=[{"kind": "error", "type": "RuntimeError",
                              "match": "only for scalar outputs"}])
    step = lesson.steps[0]
    by_hand = "raise RuntimeError('grad can be implicitly created only for scalar outputs')\n"
    verdict = grade_step(lesson, step, by_hand, runner=sandbox)
    assert not verdict.passed
    assert "your own `raise`" in verdict.checks[0].message.en
    # torch asked to raise it is still the learner's raise
    asked = "import torch\ntorch._check(False, lambda: 'only for scalar outputs')\n"
    assert not grade_step(lesson, step, asked, runner=sandbox).passed
    # the error torch raises, from C (an in-place op on a leaf) or from Python, counts
    assert grade_step(lesson, step, step.solution, runner=sandbox).passed
    leaf = _lesson(solution="import torch\nw = torch.ones(3, requires_grad=True)\nw.mul_(2)\n",
                   checks=[{"kind": "error", "type": "RuntimeError", "match": "leaf Variable"}])
    assert grade_step(leaf, leaf.steps[0], leaf.steps[0].solution, runner=sandbox).passed
    assert _found(leaf, sandbox) == []


def test_uses_forbidden_matches_the_ways_a_learner_spells_a_call() -> None:
    vector_norm = AstCheck(kind="ast", rule="does_not_call", name="torch.linalg.vector_norm")
    assert uses_forbidden("import torch\ntorch.linalg.vector_norm(t)\n", vector_norm)
    assert uses_forbidden("from torch.linalg import vector_norm\nvector_norm(t)\n", vector_norm)
    assert not uses_forbidden("t.norm()\n", vector_norm)
    norm = AstCheck(kind="ast", rule="does_not_call", name="norm")
    assert uses_forbidden("t.norm()\n", norm) and uses_forbidden("torch.norm(t)\n", norm)
    assert not uses_forbidden("normalize(t)\nnorm = 2\n", norm)
    data = AstCheck(kind="ast", rule="no_data_attribute")
    assert uses_forbidden("w.data -= 1\n", data) and not uses_forbidden("data = w * 2\n", data)
    assert not uses_forbidden("w.data(\n", data)  # not Python: tries nothing


_FORBIDS_NORM = """\
id: demo
title: {{en: Demo, zh: 演示}}
steps:
  - id: by-hand
    kind: code
    title: {{en: By hand, zh: 手算}}
    prompt: {{en: Write l2_norm without norm., zh: 不用 norm 写 l2_norm。}}
    starter: "import torch\\n\\n\\ndef l2_norm(t):\\n    ...\\n"
    solution: "import torch\\n\\n\\ndef l2_norm(t):\\n    return (t ** 2).sum().sqrt()\\n"
    checks:
      - {{kind: function, function: l2_norm, cases: ["torch.tensor([3., 4.])"]}}
      - {{kind: ast, rule: does_not_call, name: norm}}
{cheats}    hints:
      - {{en: Square., zh: 平方。}}
      - {{en: Sum and sqrt., zh: 求和再开方。}}
"""


def test_a_forbidden_api_needs_a_cheat_that_uses_it(write_lesson) -> None:
    """Issue 21 §2, "the forbidden API used": every rule that forbids an API is attacked by
    a program that does the task with it (which the dynamic lint then shows fails)."""
    bare = lint_paths([write_lesson(_FORBIDS_NORM.format(cheats=""))])
    assert [(p.line, p.message) for p in bare.problems] == [(
        12, "step 'by-hand' forbids `norm`, but neither its starter nor any of its cheats does "
            "the task with it; add one under 'cheats' so lint can show the check catches it")]
    cheat = ("    cheats:\n      - \"import torch\\n\\n\\ndef l2_norm(t):\\n"
             "    return t.norm()\\n\"\n")
    tried = lint_paths([write_lesson(_FORBIDS_NORM.format(cheats=cheat), "b.yaml")])
    assert tried.problems == []

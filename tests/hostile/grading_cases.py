"""Shared material for the hostile grading and report cases: a small course, its honest
wrong answers, and helpers to forge what a run reports.

Every forged result stands for what a submission can make its own process say (it runs in
that process, so it can write any result it likes): the grade must not rise above the honest
wrong answer's for it.
"""

from __future__ import annotations

from typing import Any

from tutor.course.models import CodeStep, Course, Lesson
from tutor.grading import ExpectedCache, Verdict, grade_run, grade_step
from tutor.grading.verdicts import expected_run
from tutor.sandbox import Limits
from tutor.sandbox.models import RunResult, TensorSnapshot, ValueSnapshot

LIMITS = Limits(wall_time_s=5.0)


def _text(en: str, zh: str) -> dict[str, str]:
    return {"en": en, "zh": zh}


NONSCALAR_SOLUTION = """\
import torch

x = torch.ones(2, requires_grad=True)
z = x + 2
z.sum().backward()
"""
NONSCALAR_WRONG = """\
import torch

x = torch.ones(2, requires_grad=True)
z = x + 2
z.mean().backward()
"""
"""x.grad is [0.5, 0.5] instead of [1., 1.]: 3 of 5."""

COPY_SOLUTION = """\
import torch

x = torch.ones(2, requires_grad=True)
(x * 3).sum().backward()
g = x.grad.clone()
"""
COPY_WRONG = """\
import torch

x = torch.ones(2, requires_grad=True)
(x * 2).sum().backward()
g = x.grad.clone()
"""
"""g is [2., 2.] instead of [3., 3.]: 1 of 4."""

ITEM_SOLUTION = """\
import torch

x = torch.tensor(2.0, requires_grad=True)
(x ** 2).backward()
v = x.grad.item()
"""
ITEM_WRONG = """\
import torch

x = torch.tensor(2.0, requires_grad=True)
(x ** 3).backward()
v = x.grad.item()
"""
"""v is 12.0 instead of 4.0: 1 of 3."""

SQUARE_SOLUTION = """\
import torch


def grad_of_square(t):
    leaf = t.detach().clone().requires_grad_(True)
    (leaf ** 2).sum().backward()
    return leaf.grad
"""
SQUARE_WRONG = SQUARE_SOLUTION.replace("return leaf.grad", "return leaf.grad / 2")
"""Returns half the gradient: 1 of 3."""

HONEST_WRONG = {
    "nonscalar": NONSCALAR_WRONG,
    "copy": COPY_WRONG,
    "item": ITEM_WRONG,
    "square": SQUARE_WRONG,
}


def lesson_data() -> dict[str, Any]:
    def step(step_id: str, solution: str, checks: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "id": step_id, "kind": "code", "title": _text(step_id, step_id),
            "prompt": _text("Compute it with autograd.", "用 autograd 计算。"),
            "solution": solution, "checks": checks,
        }

    return {
        "id": "hostile",
        "title": _text("Hostile cases", "恶意用例"),
        "topics": ["non_scalar_backward"],
        "steps": [
            step("nonscalar", NONSCALAR_SOLUTION, [
                {"kind": "no_error"},
                {"kind": "value", "expr": "x.grad", "points": 2},
                {"kind": "attribute", "expr": "x.grad", "attribute": "shape"},
                {"kind": "ast", "rule": "grad_from_backward"},
            ]),
            step("copy", COPY_SOLUTION, [
                {"kind": "no_error"},
                {"kind": "value", "expr": "g", "points": 2},
                {"kind": "value", "expr": "g", "expected": [3.0, 3.0]},
            ]),
            step("item", ITEM_SOLUTION, [
                {"kind": "no_error"},
                {"kind": "value", "expr": "v", "points": 2},
            ]),
            step("square", SQUARE_SOLUTION, [
                {"kind": "no_error"},
                {"kind": "function", "function": "grad_of_square", "points": 2,
                 "cases": ["torch.tensor([1., 2.])", "torch.tensor([[3.], [-1.]])"]},
            ]),
        ],
    }


def lesson() -> Lesson:
    return Lesson.model_validate(lesson_data())


def course() -> Course:
    return Course(lessons=[lesson()])


def code_step(the_lesson: Lesson, step_id: str) -> CodeStep:
    step = the_lesson.step(step_id)
    assert isinstance(step, CodeStep)
    return step


class Bench:
    """The course graded for real once: the truth and each honest wrong answer's verdict."""

    def __init__(self, sandbox: Any) -> None:
        self.sandbox = sandbox
        self.lesson = lesson()
        self.cache = ExpectedCache(disk=False)
        self.truth: dict[str, RunResult] = {}
        self.wrong: dict[str, Verdict] = {}
        for step_id, code in HONEST_WRONG.items():
            step = code_step(self.lesson, step_id)
            self.truth[step_id] = expected_run(step, runner=sandbox, cache=self.cache)
            self.wrong[step_id] = grade_step(self.lesson, step, code, runner=sandbox,
                                             cache=self.cache, limits=LIMITS)

    def honest_wrong_score(self, step_id: str) -> float:
        return self.wrong[step_id].score

    def grade_code(self, step_id: str, code: str, *, reveal: bool = False) -> Verdict:
        """A submission graded for real (the integrity policy included)."""
        return grade_step(self.lesson, code_step(self.lesson, step_id), code,
                          runner=self.sandbox, cache=self.cache, limits=LIMITS, reveal=reveal)

    def grade_forged(self, step_id: str, probes: dict[str, Any], *, reveal: bool = False,
                     **run_fields: Any) -> Verdict:
        """The honest wrong answer's run with some probe values replaced by forged data
        (a snapshot dict, or a ``ProbeResult`` dict), graded as ``tutor grade`` grades."""
        step = code_step(self.lesson, step_id)
        run = self.wrong[step_id].run
        assert run is not None
        data = run.model_dump()
        for probe in data["probes"]:
            if probe["expr"] in probes:
                probe["value"] = probes[probe["expr"]]
                probe["error"] = None
        data.update(run_fields)
        forged = RunResult.model_validate(data)
        return grade_run(self.lesson, step, HONEST_WRONG[step_id], forged,
                         self.truth[step_id], reveal=reveal)

    def probe_exprs(self, step_id: str) -> list[str]:
        run = self.wrong[step_id].run
        assert run is not None
        return [probe.expr for probe in run.probes]


def tensor(values: Any, shape: list[int], dtype: str = "torch.float32", **extra: Any
           ) -> dict[str, Any]:
    """A tensor snapshot as a run would send it (``extra`` overrides any field)."""
    numel = 1
    for dim in shape:
        numel *= dim
    data = {"kind": "tensor", "type": "torch.Tensor", "shape": shape, "dtype": dtype,
            "device": "cpu", "requires_grad": False, "is_leaf": True, "grad_fn": None,
            "numel": numel, "values": values, "truncated": False, "grad": None}
    data.update(extra)
    TensorSnapshot.model_validate(data)  # it is data the parent accepts as a snapshot
    return data


def value(type_name: str, plain: Any, text: str | None = None) -> dict[str, Any]:
    data = {"kind": "value", "type": type_name, "repr": text if text is not None else
            repr(plain), "value": plain}
    ValueSnapshot.model_validate(data)
    return data


def all_text(verdict: Verdict) -> str:
    """Everything a verdict would put in a report, in both languages."""
    return verdict.model_dump_json(exclude={"run"})


def feedback_text(verdict: Verdict) -> str:
    """The words of a verdict's feedback (messages and details), both languages."""
    parts = [verdict.message.en + verdict.message.zh] if verdict.message else []
    for check in verdict.checks:
        parts += [check.message.en, check.message.zh]
        if check.output_text is not None:
            parts += [check.output_text.en, check.output_text.zh]
    return "\n".join(parts)


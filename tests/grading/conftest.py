"""Lessons and fixtures for the grading tests: the seed's exercises, built with the models."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tutor.course import load_course
from tutor.course.models import Course, Lesson
from tutor.grading import ExpectedCache

MINI_COURSE = Path(__file__).resolve().parents[1] / "fixtures" / "mini_course"

NONSCALAR_SOLUTION = """\
import torch

x = torch.ones(2, requires_grad=True)
z = x + 2
z.sum().backward()
print(x.grad)
"""

MM_SOLUTION = """\
import torch

x = torch.tensor([2., 1.], requires_grad=True)
y = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
z = torch.mm(x.view(1, 2), y)
# the same as the seed's z.backward(torch.Tensor([[1., 0]])): weight each output, then sum
(z * torch.tensor([[1., 0.]])).sum().backward(retain_graph=True)
"""

SQUARE_SOLUTION = """\
import torch


def grad_of_square(t):
    leaf = t.detach().clone().requires_grad_(True)
    (leaf ** 2).sum().backward()
    return leaf.grad
"""


def _text(en: str, zh: str) -> dict[str, str]:
    return {"en": en, "zh": zh}


def seed_lesson_data() -> dict[str, Any]:
    """The seed's exercises: non-scalar backward, the mm example, a function on hidden inputs."""
    return {
        "id": "seed",
        "title": _text("Seed exercises", "原文练习"),
        "topics": ["non_scalar_backward", "mm_retain_graph"],
        "steps": [
            {
                "id": "nonscalar",
                "kind": "code",
                "title": _text("Non-scalar backward", "非标量 backward"),
                "prompt": _text("Fill x.grad from z = x + 2.", "由 z = x + 2 填充 x.grad。"),
                "starter": "import torch\n\nx = torch.ones(2, requires_grad=True)\nz = x + 2\n",
                "solution": NONSCALAR_SOLUTION,
                "checks": [
                    {"kind": "no_error"},
                    {"kind": "value", "expr": "x.grad", "points": 2},
                    {"kind": "attribute", "expr": "x.grad", "attribute": "shape"},
                    {"kind": "ast", "rule": "grad_from_backward"},
                ],
            },
            {
                "id": "mm",
                "kind": "code",
                "title": _text("The mm example", "mm 例子"),
                "prompt": _text("Reproduce the seed's mm example.", "重现原文的 mm 例子。"),
                "solution": MM_SOLUTION,
                "checks": [
                    {"kind": "value", "expr": "x.grad"},
                    {"kind": "value", "expr": "y.grad"},
                    {"kind": "attribute", "expr": "z", "attribute": "grad_fn",
                     "expected": "MmBackward0"},
                    {"kind": "ast", "rule": "calls", "name": "torch.mm"},
                    {"kind": "ast", "rule": "grad_from_backward"},
                ],
            },
            {
                "id": "square",
                "kind": "code",
                "title": _text("Gradient of a square", "平方的梯度"),
                "prompt": _text("Write grad_of_square(t).", "编写 grad_of_square(t)。"),
                "solution": SQUARE_SOLUTION,
                "checks": [
                    {"kind": "function", "function": "grad_of_square", "points": 3,
                     "cases": ["torch.tensor([1., 2.])", "torch.tensor([[0.5, -1.], [3., 0.]])",
                               "torch.tensor(4.)"]},
                ],
            },
            {
                "id": "nonscalar-fix",
                "kind": "fix",
                "title": _text("Fix it", "修复它"),
                "prompt": _text("Fix the scalar error.", "修复标量错误。"),
                "starter": "import torch\n\nx = torch.ones(2, requires_grad=True)\nz = x + 2\n"
                "z.backward()\n",
                "solution": NONSCALAR_SOLUTION,
                "checks": [{"kind": "no_error"}, {"kind": "value", "expr": "x.grad"}],
            },
            {
                "id": "mm-xgrad",
                "kind": "answer",
                "title": _text("x.grad of the mm example", "mm 例子的 x.grad"),
                "prompt": _text("What is x.grad?", "x.grad 是多少？"),
                "code": MM_SOLUTION,
                "expr": "x.grad",
                "cross_check": [1.0, 3.0],
            },
            {
                "id": "mm-gradfn",
                "kind": "answer",
                "title": _text("grad_fn", "grad_fn"),
                "prompt": _text("What is type(z.grad_fn).__name__?", "z.grad_fn 是什么？"),
                "code": MM_SOLUTION,
                "expr": "z.grad_fn",
            },
        ],
    }


@pytest.fixture(scope="session")
def seed_lesson() -> Lesson:
    return Lesson.model_validate(seed_lesson_data())


@pytest.fixture(scope="session")
def mini_course() -> Course:
    return load_course(MINI_COURSE)


@pytest.fixture(scope="session")
def shared_cache(tmp_path_factory: pytest.TempPathFactory) -> ExpectedCache:
    """One expected-values cache for the session (solutions run once, as in batch grading)."""
    return ExpectedCache(tmp_path_factory.mktemp("expected"))

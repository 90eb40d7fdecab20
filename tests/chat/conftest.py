"""A small course built with the models, so chat tests do not depend on the bundled one."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tutor.chat import Tutor
from tutor.course.models import Course, Lesson

SOLUTION = """w = torch.tensor([2., 5.], requires_grad=True)
cube = (w ** 3).sum()
cube.backward()
grad_of_w = w.grad.clone()
"""

LESSONS = [
    {
        "id": "backward",
        "title": {"en": "Calling backward", "zh": "调用 backward"},
        "steps": [
            {
                "id": "intro",
                "kind": "reading",
                "title": {"en": "What backward does", "zh": "backward 做什么"},
                "body": {
                    "en": "Call `y.backward()` on a scalar result and autograd fills `.grad` "
                    "of every leaf that requires grad.\n\n```python\nx = torch.ones(2, "
                    "requires_grad=True)\n(x * 4).sum().backward()\n```",
                    "zh": "对标量结果调用 `y.backward()`，autograd 会填充每个需要梯度的叶子的 "
                    "`.grad`。\n\n```python\nx = torch.ones(2, requires_grad=True)\n(x * 4)."
                    "sum().backward()\n```",
                },
            },
            {
                "id": "cube",
                "kind": "code",
                "title": {"en": "Gradient of a cube", "zh": "立方的梯度"},
                "prompt": {
                    "en": "Make `w` from [2., 5.] tracked, sum its cubes and get `w.grad`.",
                    "zh": "用 [2., 5.] 创建需要梯度的 `w`，对立方求和并得到 `w.grad`。",
                },
                "starter": "w = torch.tensor([2., 5.])\n",
                "solution": SOLUTION,
                "checks": [
                    {"kind": "value", "expr": "w.grad", "expected": [12.0, 75.0]},
                    {"kind": "value", "expr": "grad_of_w.sum()", "expected": 87.0},
                ],
                "hints": [
                    {"en": "Which tensor must be tracked?", "zh": "哪个张量需要被追踪？"},
                    {"en": "Reduce to one number first.", "zh": "先把结果变成一个数。"},
                    {"en": "Then call backward on it.", "zh": "然后对它调用 backward。"},
                ],
            },
        ],
    },
    {
        "id": "detach",
        "title": {"en": "Stopping history", "zh": "停止记录历史"},
        "steps": [
            {
                "id": "intro",
                "kind": "reading",
                "title": {"en": "detach()", "zh": "detach()"},
                "body": {
                    "en": "`y.detach()` returns the same values without history; gradients "
                    "stop there.",
                    "zh": "`y.detach()` 返回同样的数值但没有历史；梯度到此为止。",
                },
            }
        ],
    },
]


@pytest.fixture(scope="session", autouse=True)
def _private_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The tutor caches its index under the user cache dir: keep tests out of the real one."""
    old = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("cache"))
    yield
    if old is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = old


@pytest.fixture(scope="session")
def course() -> Course:
    return Course(lessons=[Lesson.model_validate(data) for data in LESSONS])


@pytest.fixture
def tutor(course: Course) -> Tutor:
    return Tutor(course, catalog_entries=[])

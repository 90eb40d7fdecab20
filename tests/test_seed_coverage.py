"""Every code sample of the source text (shared/seed) is taught by a lesson step, and runs.

Each seed snippet is mapped to the lesson step that uses it. The test asserts that the step's
code contains the snippet (comments and whitespace ignored, so the indentation the blog post
lost does not matter) and runs that code in the real sandbox with the outcome the lesson
expects: an error for the snippet that teaches one, the right values otherwise.

Known errata of the seed, fixed in the lessons and here:

- the blog lost the indentation of the ``while`` body and of the ``Net`` class (whitespace is
  ignored by the comparison);
- ``torch.Tensor([[1., 0]])`` becomes ``torch.tensor([[1., 0.]])``: the legacy constructor
  always makes a CPU tensor, so the example would fail on a GPU (lesson ``matrix-mm`` explains);
- printed outputs (``#True``, ``>>> ...``, ``grad_fn=<MmBackward>``, ``x.grad: tensor([[1., 3.]])``)
  are not code; the lessons teach what torch 2.x really prints (``MmBackward0``, shape (2,)).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tutor.course import load_course
from tutor.course.models import Course
from tutor.sandbox import Probe, Sandbox

LESSONS_DIR = Path(__file__).resolve().parent.parent / "lessons"


@dataclass(frozen=True)
class SeedSnippet:
    name: str
    code: str
    """The seed's code with its errata fixed (see the module docstring)."""
    ref: str
    """``LESSON/STEP`` that uses it."""
    field: str
    """Which code of the step holds it: ``starter``, ``solution`` or ``code``."""
    error: str | None = None
    """Regex the run's error message must match; ``None``: the run must finish cleanly."""
    stdout: tuple[str, ...] = ()
    probes: dict[str, object] = field(default_factory=dict)
    """Expression -> expected JSON value after the run."""


SNIPPETS = [
    SeedSnippet(
        name="requires_grad flags",
        code="""
x = torch.ones(2, 2, requires_grad=True)

y = torch.ones(2, 2)

x.requires_grad #True

y.requires_grad #False
""",
        ref="requires-grad/seed-flags",
        field="code",
        probes={"x.requires_grad": True, "y.requires_grad": False},
    ),
    SeedSnippet(
        name="backward on a non-scalar output",
        code="""
x = torch.ones(2,requires_grad=True)
print(x)
z = x + 2
print(z)
z.backward()
print(x.grad)
""",
        ref="non-scalar/fix-scalar",
        field="starter",
        error=r"grad can be implicitly created only for scalar outputs",
    ),
    SeedSnippet(
        name="z.sum().backward()",
        code="""
x = torch.ones(2,requires_grad=True)
z = x + 2
z.sum().backward()
print(x.grad)
""",
        ref="non-scalar/fix-scalar",
        field="solution",
        stdout=("tensor([1., 1.])",),
    ),
    SeedSnippet(
        name="torch.mm with retain_graph",
        code="""
x = torch.tensor([2., 1.], requires_grad=True)
y = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)

z = torch.mm(x.view(1, 2), y)
print(f"z:{z}")
z.backward(torch.tensor([[1., 0.]]), retain_graph=True)
print(f"x.grad: {x.grad}")
print(f"y.grad: {y.grad}")
""",
        ref="matrix-mm/seed-mm",
        field="solution",
        stdout=(
            "z:tensor([[5., 8.]], grad_fn=<MmBackward0>)",
            "x.grad: tensor([1., 3.])",
            "y.grad: tensor([[2., 0.],",
        ),
        probes={"list(x.grad.shape)": [2], "x.grad.tolist()": [1.0, 3.0]},
    ),
    SeedSnippet(
        name="y.data.norm() doubling loop",
        code="""
x = torch.randn(3, requires_grad=True)
print(x)
y = x * 2
while y.data.norm() < 1000:
    y = y * 2

print(y)
""",
        ref="data-norm/doubling-backward",
        field="starter",
        probes={
            "bool(y.norm() >= 1000)": True,
            "bool((y / 2).norm() < 1000)": True,
            # y is x times a power of two
            "bool(torch.allclose(y / x, (y / x)[0]))": True,
            "float(torch.log2((y / x)[0]).round() - torch.log2((y / x)[0])) == 0.0": True,
        },
    ),
    SeedSnippet(
        name="nn.Module Net",
        code="""
import torch
import torch.nn as nn
import torch.nn.functional as F

class Net(nn.Module):

    def __init__(self):
        super(Net, self).__init__()
        # 1 input image channel, 6 output channels, 5x5 square convolution
        # kernel
        self.conv1 = nn.Conv2d(1, 6, 5)
        self.conv2 = nn.Conv2d(6, 16, 5)
        # an affine operation: y = Wx + b
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)
""",
        ref="nn-module/forward",
        field="solution",
        probes={
            "list(out.shape)": [1, 10],
            "[tuple(p.shape) for p in net.parameters()][::2]": [
                [6, 1, 5, 5],
                [16, 6, 5, 5],
                [120, 400],
                [84, 120],
                [10, 84],
            ],
            "net.conv1.bias.grad is not None": True,
        },
    ),
]


def normalised(code: str) -> str:
    """Code without comments and without any whitespace: layout-insensitive comparison."""
    without_comments = re.sub(r"#[^\n]*", "", code)
    return re.sub(r"\s+", "", without_comments)


@pytest.fixture(scope="module")
def course() -> Course:
    return load_course(LESSONS_DIR)


def step_code(course: Course, snippet: SeedSnippet) -> str:
    _, step = course.find(snippet.ref)
    code = getattr(step, snippet.field, None)
    assert isinstance(code, str), f"{snippet.ref} has no {snippet.field}"
    return code


def test_every_seed_topic_has_a_snippet_mapping() -> None:
    names = {snippet.name for snippet in SNIPPETS}
    assert len(names) == len(SNIPPETS) == 6


@pytest.mark.parametrize("snippet", SNIPPETS, ids=lambda s: s.name)
def test_step_contains_seed_snippet(course: Course, snippet: SeedSnippet) -> None:
    code = step_code(course, snippet)
    assert normalised(snippet.code) in normalised(code), (
        f"{snippet.ref} ({snippet.field}) does not contain the seed's {snippet.name!r}"
    )


def test_normalisation_is_not_vacuous() -> None:
    """The comparison must tell a changed snippet apart from the original."""
    original = normalised(SNIPPETS[3].code)
    assert normalised(SNIPPETS[3].code.replace("retain_graph=True", "")) != original
    assert normalised("a = 1  # note\n    b = 2") == "a=1b=2"


@pytest.mark.parametrize("snippet", SNIPPETS, ids=lambda s: s.name)
def test_seed_snippet_runs_as_the_lesson_expects(
    course: Course, sandbox: Sandbox, snippet: SeedSnippet
) -> None:
    code = step_code(course, snippet)
    result = sandbox.run(code, device="cpu", probes=[Probe(expr=e) for e in snippet.probes])
    if snippet.error is not None:
        assert result.outcome == "error", result
        assert result.error is not None
        assert result.error.type == "RuntimeError"
        assert re.search(snippet.error, result.error.message), result.error.message
        return
    assert result.outcome == "ok", result.error
    for text in snippet.stdout:
        assert text in result.stdout, (text, result.stdout)
    for expr, expected in snippet.probes.items():
        probe = result.probe(expr)
        assert probe is not None and probe.error is None, (expr, probe)
        assert probe.value is not None
        got = getattr(probe.value, "value", None)
        if isinstance(expected, list) and got is not None:
            got = _as_lists(got)
        assert got == expected, (expr, got, expected)


def _as_lists(value: object) -> object:
    if isinstance(value, (list, tuple)):
        return [_as_lists(item) for item in value]
    return value


README = LESSONS_DIR / "README.md"
_ROW = re.compile(
    r"^\|.*?\| `(?P<lesson>[a-z0-9-]+)` \(`[^`]+\.yaml`\) \| (?P<steps>.+) \|$", re.M)


def test_readme_maps_every_topic_and_names_only_real_steps(course: Course) -> None:
    """lessons/README.md maps each source-text topic (and each later lesson) to its steps;
    every step it names exists, and every lesson of the course has a row."""
    rows = list(_ROW.finditer(README.read_text(encoding="utf-8")))
    assert len(rows) >= 20
    mapped = set()
    for row in rows:
        lesson = course.lesson(row.group("lesson"))
        mapped.add(lesson.id)
        for ref in re.findall(r"`([a-z0-9/-]+)`", row.group("steps")):
            if "/" in ref:
                course.find(ref)
            else:
                lesson.step(ref)
    assert mapped == {lesson.id for lesson in course.lessons}
    from typing import get_args

    from tutor.course.models import Topic

    covered = {topic for lesson in course.lessons for topic in lesson.topics}
    assert covered == set(get_args(Topic))

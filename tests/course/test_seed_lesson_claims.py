"""Claims the lesson text makes about torch, checked against torch (QA2 #29).

The seed-coverage test runs the code; these check sentences: the line a fix step says its
starter stops on, and the matrix-form formulas lesson 6 gives for the gradients (each one
evaluated, in both languages, against what backward() really computes).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
import torch

from tutor.course import load_course
from tutor.course.models import Course, FixStep

LESSONS_DIR = Path(__file__).resolve().parents[2] / "lessons"


@pytest.fixture(scope="module")
def course() -> Course:
    return load_course(LESSONS_DIR)


def failing_line(code: str) -> str:
    """The source line at which ``code`` raises."""
    try:
        exec(compile(code, "<starter>", "exec"), {})
    except Exception:
        tb = sys.exc_info()[2]
        lineno = None
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == "<starter>":
                lineno = tb.tb_lineno
            tb = tb.tb_next
        assert lineno is not None
        return code.splitlines()[lineno - 1]
    raise AssertionError("the starter was expected to fail")


def test_integer_tensor_prompt_names_the_line_that_fails(course: Course) -> None:
    # the prompt said "stops at the first line", but the import runs; the tensor line fails
    _, step = course.find("requires-grad/integer-tensor")
    assert isinstance(step, FixStep)
    line = failing_line(step.starter_for("en"))
    target = line.split("=")[0].strip()
    assert target == "x"
    assert f"creates `{target}`" in step.prompt.en and "first line" not in step.prompt.en
    assert f"创建 `{target}`" in step.prompt.zh and "第一行" not in step.prompt.zh


@pytest.mark.parametrize(("lang", "start"), [("en", "In matrix form"), ("zh", "写成矩阵形式")])
def test_matrix_form_formulas_give_torchs_gradients(course: Course, lang: str, start: str) -> None:
    # `x.grad = v @ yᵀ` has shape (1, 2), the very shape the lesson says x.grad does not have
    lesson = course.lesson("matrix-mm")
    body = lesson.steps[0].body.get(lang)  # type: ignore[union-attr]
    paragraph = body[body.index(start):].split("\n\n")[0]
    x = torch.tensor([2., 1.], requires_grad=True)
    y = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
    v = torch.tensor([[1., 0.]])
    torch.mm(x.view(1, 2), y).backward(v)
    names: dict[str, object] = {"x": x.detach(), "y": y.detach(), "v": v, "torch": torch}
    checked = []
    for span in re.findall(r"`([^`]+)`", paragraph):
        if " = " not in span:
            continue
        lhs, rhs = (part.strip() for part in span.split(" = ", 1))
        value = eval(rhs.replace("ᵀ", ".T"), names)
        if lhs.endswith(".grad"):
            actual = {"x.grad": x.grad, "y.grad": y.grad}[lhs]
            assert value.shape == actual.shape and torch.equal(value, actual), (lang, span)
            checked.append(lhs)
        else:
            names[lhs] = value
    assert sorted(checked) == ["x.grad", "y.grad"]

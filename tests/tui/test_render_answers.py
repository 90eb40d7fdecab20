"""Answer steps and verdicts as the learner reads them (QA2 #24, grading's bilingual output)."""

from __future__ import annotations

from typing import Any

import pytest

from tutor.course.models import AnswerStep, Course
from tutor.grading.models import CheckResult, Verdict
from tutor.i18n import T
from tutor.learning import Attempt
from tutor.tui.render import answer_placeholder, verdict_markdown


def answer_step(course: Course) -> AnswerStep:
    step = course.lessons[0].step("grad-value")
    assert isinstance(step, AnswerStep)
    return step


@pytest.mark.parametrize(
    ("expr", "cross_check", "en", "zh"),
    [
        ("y.requires_grad", None, "True or False", "True 或 False"),
        ("b.is_leaf", False, "True or False", "True 或 False"),
        ("c.grad_fn.name()", None, "a node name, e.g. MulBackward0", "节点名，例如 MulBackward0"),
        ("c.grad_fn.name()", "MulBackward0", "a node name, e.g. AddBackward0", None),
        ("len(params)", 10, "a whole number, e.g. 3", "整数，例如 3"),
        ("list(w.shape)", [120, 400], "a list, e.g. [2, 3]", None),
        ("x.grad", 8.0, "a number, e.g. 2.5", None),
        ("x.grad", [2.0, 4.0], "e.g. tensor([1., 3.])", "例如 tensor([1., 3.])"),
        ("x.grad", [1.0, 3.0], "e.g. tensor([2., 5.])", None),  # never the answer itself
        ("x.grad", None, "e.g. tensor([1., 3.])", None),
    ],
)
def test_placeholder_fits_the_kind_of_answer(
    course: Course, expr: str, cross_check: Any, en: str, zh: str | None
) -> None:
    step = answer_step(course).model_copy(update={"expr": expr, "cross_check": cross_check})
    assert answer_placeholder(step, "en") == en
    if zh is not None:
        assert answer_placeholder(step, "zh") == zh


def attempt(*checks: CheckResult, message: T | None = None) -> Attempt:
    verdict = Verdict(
        step="mini-basics/grad-value",
        status="fail",
        score=0,
        max_score=1,
        checks=list(checks),
        message=message,
    )
    return Attempt(step_ref=verdict.step, verdict=verdict)


def test_verdict_says_a_sentence_once() -> None:
    said = T("y.requires_grad is not True.", "y.requires_grad 不是 True。")
    check = CheckResult(
        name="answer",
        label=T("y.requires_grad", "y.requires_grad"),
        status="fail",
        points=0,
        max_points=1,
        message=said,
    )
    for lang in ("en", "zh"):
        text = verdict_markdown(attempt(check, message=said), lang)
        assert text.count(said.get(lang)) == 1
    other = T("Work it out step by step.", "一步一步地推算。")
    assert "Work it out" in verdict_markdown(attempt(check, message=other), "en")


def test_check_output_in_the_learners_language() -> None:
    check = CheckResult(
        name="value:x.grad",
        label=T("x.grad", "x.grad"),
        status="fail",
        points=0,
        max_points=1,
        message=T("x.grad differs", "x.grad 不同"),
        output="got: None\nexpected: tensor([1.])",
        output_text=T("got: None\nexpected: tensor([1.])", "实际：None\n应为：tensor([1.])"),
    )
    zh = verdict_markdown(attempt(check), "zh")
    assert "实际：None" in zh and "got:" not in zh
    assert "got: None" in verdict_markdown(attempt(check), "en")


def test_top_bar_keeps_progress_and_device_at_any_width() -> None:
    """QA2 #25: at 80x24 in Chinese the device was cut off the end of the bar."""
    from rich.cells import cell_len

    from tutor.tui.top_bar import topbar_text

    rest = ["已完成 3/69", "设备：cuda:0"]
    lesson = "2. 计算图：grad_fn 与 next_functions 一路追到叶子"
    assert topbar_text("autograd 导师", lesson, rest, width=120).startswith("autograd 导师 │ 2.")
    for width in (78, 60, 40):
        bar = topbar_text("autograd 导师", lesson, rest, width=width)
        assert cell_len(bar) <= width and bar.endswith("│ 已完成 3/69 │ 设备：cuda:0")
        assert "autograd 导师" not in bar and bar.startswith("2. 计算图")
    assert "…" in topbar_text("autograd 导师", lesson, rest, width=40)


def test_zh_check_line_uses_full_width_brackets() -> None:
    check = CheckResult(
        name="choice:1",
        label=T("Choice 1: yes.", "选项 1：是。"),
        status="pass",
        points=1,
        max_points=1,
        message=T("Picked, rightly.", "已选，选得对。"),
    )
    assert "**选项 1：是。**（1/1）— 已选，选得对。" in verdict_markdown(attempt(check), "zh")
    assert "**Choice 1: yes.** (1/1) — Picked, rightly." in verdict_markdown(attempt(check), "en")

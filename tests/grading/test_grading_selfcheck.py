"""verify_lesson: reference answers must pass their own checks; bugs in lessons are named."""

from __future__ import annotations

from typing import Any

from tutor.course.models import Course, Lesson
from tutor.grading.selfcheck import SelfCheckProblem, verify_lesson
from tutor.sandbox import Sandbox


def _t(s: str) -> dict[str, str]:
    return {"en": s, "zh": s + "。"}


def _broken_lesson() -> Lesson:
    good = "import torch\nx = torch.ones(2, requires_grad=True)\n(x * 3).sum().backward()\n"
    steps: list[dict[str, Any]] = [
        {"id": "wrong-literal", "kind": "code", "title": _t("a"), "prompt": _t("p"),
         "solution": good,
         "checks": [{"kind": "value", "expr": "x.grad", "expected": [2.0, 2.0]}]},
        {"id": "good-code", "kind": "code", "title": _t("b"), "prompt": _t("p"),
         "solution": good, "checks": [{"kind": "value", "expr": "x.grad"}]},
        {"id": "starter-passes", "kind": "fix", "title": _t("c"), "prompt": _t("p"),
         "starter": good, "solution": good, "checks": [{"kind": "no_error"}]},
        {"id": "code-raises", "kind": "answer", "title": _t("d"), "prompt": _t("p"),
         "code": "import torch\nraise ValueError('oops')\n", "expr": "1"},
        {"id": "cross-wrong", "kind": "answer", "title": _t("e"), "prompt": _t("p"),
         "code": good, "expr": "x.grad", "cross_check": [[3.0, 3.0]]},
        {"id": "cross-right", "kind": "answer", "title": _t("f"), "prompt": _t("p"),
         "code": good, "expr": "x.grad", "cross_check": "tensor([3., 3.])"},
        {"id": "no-correct", "kind": "quiz", "title": _t("g"), "prompt": _t("p"),
         "choices": [{"text": "a", "explanation": "x"}, {"text": "b", "explanation": "y"}]},
        {"id": "two-correct", "kind": "quiz", "title": _t("h"), "prompt": _t("p"),
         "choices": [{"text": "a", "correct": True, "explanation": "x"},
                     {"text": "b", "correct": True, "explanation": "y"}]},
    ]
    return Lesson.model_validate({"id": "broken", "title": _t("Broken"), "steps": steps})


def test_mini_course_is_clean(mini_course: Course, sandbox: Sandbox) -> None:
    for lesson in mini_course.lessons:
        assert verify_lesson(lesson, runner=sandbox) == [], lesson.id


def test_each_problem_names_step_and_field(sandbox: Sandbox) -> None:
    problems = verify_lesson(_broken_lesson(), runner=sandbox, cheats=False)  # cheats: tests/course
    assert all(isinstance(p, SelfCheckProblem) for p in problems)
    found = [(p.step_id, p.field) for p in problems]
    assert found == [
        ("wrong-literal", "solution"),
        ("starter-passes", "starter"),
        ("code-raises", "code"),
        ("cross-wrong", "cross_check"),
        ("no-correct", "choices"),
        ("two-correct", "choices"),
    ]
    by_step = {p.step_id: p.message for p in problems}
    assert "differs at [0]: got 3.0, expected 2.0" in by_step["wrong-literal"]
    assert "ValueError: oops" in by_step["code-raises"]
    # torch is the truth, the cross_check the author's claim (QA2 #15)
    assert by_step["cross-wrong"] == (
        "`x.grad`: torch gives [3.0, 3.0], cross_check says [[3.0, 3.0]] "
        "(shape (2,) vs (1, 2))")
    zh = {p.step_id: p.text.zh for p in problems if p.text is not None}
    assert zh["cross-wrong"] == (
        "`x.grad`：torch 算出 [3.0, 3.0]，cross_check 写的是 [[3.0, 3.0]]"
        "（形状 (2,) 与 (1, 2) 不同）")
    assert zh["starter-passes"].startswith("这个带错的 starter 已经通过了所有检查")


def test_each_translated_starter_of_a_fix_step_must_fail(sandbox: Sandbox) -> None:
    """The zh starter is graded on its own: one that lost the bug is named by language."""
    buggy = "import torch\nx = torch.ones(2, requires_grad=True)\n(x * 3).backward()  # {c}\n"
    fixed = "import torch\nx = torch.ones(2, requires_grad=True)\n(x * 3).sum().backward()\n"
    step = {"id": "fix-me", "kind": "fix", "title": _t("c"), "prompt": _t("p"),
            "solution": fixed, "checks": [{"kind": "no_error"}]}

    def lesson(starter: Any) -> Lesson:
        return Lesson.model_validate(
            {"id": "tr", "title": _t("T"), "steps": [{**step, "starter": starter}]})

    both_fail = {"en": buggy.format(c="the bug"), "zh": buggy.format(c="这里有错")}
    assert verify_lesson(lesson(both_fail), runner=sandbox, cheats=False) == []

    zh_fixed = {"en": buggy.format(c="the bug"), "zh": fixed + "# 已经修好了\n"}
    [problem] = verify_lesson(lesson(zh_fixed), runner=sandbox, cheats=False)
    assert (problem.step_id, problem.field) == ("fix-me", "starter.zh")
    assert "zh version" in problem.message

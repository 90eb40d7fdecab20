"""Typed answers (parsed without eval) and quizzes."""

from __future__ import annotations

import math

import pytest

from tutor.course.models import AnswerStep, Course, Lesson, QuizStep
from tutor.grading import (
    AnswerSyntaxError,
    ExpectedCache,
    QuizSelectionError,
    grade_answer,
    grade_quiz,
    parse_answer,
)
from tutor.sandbox import Sandbox


@pytest.mark.parametrize(
    ("typed", "kind", "value", "shape"),
    [
        ("tensor([1., 3.])", "tensor", [1.0, 3.0], [2]),
        ("torch.tensor([[2., 0.], [1., 0.]])", "tensor", [[2.0, 0.0], [1.0, 0.0]], [2, 2]),
        ("tensor([[5., 8.]], grad_fn=<MmBackward0>)", "tensor", [[5.0, 8.0]], [1, 2]),
        ("tensor([1., 1.], requires_grad=True)", "tensor", [1.0, 1.0], [2]),
        ("tensor(3.)", "tensor", 3.0, []),
        ("tensor([2.,\n        1.])", "tensor", [2.0, 1.0], [2]),
        ("[1, 3]", "sequence", [1, 3], [2]),
        ("1, 3", "sequence", [1, 3], [2]),
        ("(2,)", "sequence", [2], [1]),
        ("torch.Size([2, 2])", "sequence", [2, 2], [2]),
        ("[[2., 0.], [1., 0.]]", "sequence", [[2.0, 0.0], [1.0, 0.0]], [2, 2]),
        ("-0.5", "number", -0.5, []),
        ("27", "number", 27, []),
        ("True", "bool", True, None),
        ("None", "none", None, None),
        ("MmBackward0", "name", "MmBackward0", None),
        ("<MmBackward0 object at 0x7f25b39f79a0>", "name", "MmBackward0", None),
        ("torch.float32", "name", "torch.float32", None),
    ],
)
def test_parse_forms(typed: str, kind: str, value: object, shape: list[int] | None) -> None:
    parsed = parse_answer(typed)
    assert (parsed.kind, parsed.value, parsed.shape) == (kind, value, shape)


def test_parse_nan_and_inf() -> None:
    parsed = parse_answer("tensor([nan, -inf])")
    assert math.isnan(parsed.value[0]) and parsed.value[1] == -math.inf


@pytest.mark.parametrize(
    "typed",
    ["", "   ", "__import__('os').system('true')", "open('x')", "[1, 2", "x.grad",
     "tensor([1., 2.], foo=1)", "[[1, 2], [3]]", "lambda: 1", "1 + 2", "-True",
     "tensor([1.], grad_fn=print('x'))"],
)
def test_malformed_answers_say_what_form_is_expected(typed: str) -> None:
    with pytest.raises(AnswerSyntaxError) as info:
        parse_answer(typed)
    text = info.value.text
    assert "tensor(" in text.en or "Type an answer" in text.en
    assert text.zh and text.zh != text.en


def _answer(lesson: Lesson, step_id: str) -> AnswerStep:
    step = lesson.step(step_id)
    assert isinstance(step, AnswerStep)
    return step


@pytest.mark.parametrize(
    ("typed", "passed", "says"),
    [
        ("tensor([1., 3.])", True, "Right"),
        ("[1, 3]", True, "Right"),
        ("1, 3", True, "Right"),
        ("tensor([1.0000001, 3.])", True, "Right"),
        ("[[1., 3.]]", False, "Your answer has shape (1, 2), but `x.grad` has shape (2,)."),
        ("[1., 2.]", False, "Your answer differs from `x.grad` at [1]: you wrote 2.0."),
        ("None", False, "is not None here"),
        ("MmBackward0", False, "different kind of value from `x.grad`, which is a tensor"),
    ],
)
def test_answer_against_torch(
    typed: str, passed: bool, says: str, seed_lesson: Lesson, sandbox: Sandbox,
    shared_cache: ExpectedCache,
) -> None:
    verdict = grade_answer(seed_lesson, _answer(seed_lesson, "mm-xgrad"), typed,
                           runner=sandbox, cache=shared_cache)
    assert verdict.passed is passed
    message = verdict.checks[0].message
    assert says in message.en and message.zh
    assert verdict.score == (1.0 if passed else 0.0)
    if not passed:  # the feedback does not give the value away
        assert "3.0" not in message.en and "3." not in (verdict.checks[0].output or "")


@pytest.mark.parametrize(
    ("typed", "passed", "says"),
    [
        ("MmBackward0", True, "Right"),
        ("<MmBackward0 object at 0x7f0>", True, "Right"),
        ("MmBackward", False, "names the node `MmBackward0`"),
        ("AddBackward0", False, "is not `AddBackward0`"),
        ("None", False, "different kind"),
    ],
)
def test_grad_fn_answer(
    typed: str, passed: bool, says: str, seed_lesson: Lesson, sandbox: Sandbox,
    shared_cache: ExpectedCache,
) -> None:
    verdict = grade_answer(seed_lesson, _answer(seed_lesson, "mm-gradfn"), typed,
                           runner=sandbox, cache=shared_cache)
    assert verdict.passed is passed, verdict.checks[0].message.en
    assert says in verdict.checks[0].message.en


def test_malformed_answer_is_not_gradable(seed_lesson: Lesson, sandbox: Sandbox) -> None:
    verdict = grade_answer(seed_lesson, _answer(seed_lesson, "mm-xgrad"), "tensor([1., 3.",
                           runner=sandbox, cache=ExpectedCache(disk=False))
    assert verdict.status == "not_gradable" and verdict.score == 0
    assert verdict.message is not None and "[1., 3.]" in verdict.message.en


def test_quiz_single_and_multiple(mini_course: Course) -> None:
    lesson = mini_course.lessons[0]
    quiz = lesson.step("who-tracks")
    assert isinstance(quiz, QuizStep)
    right = grade_quiz(lesson, quiz, [1])
    assert right.passed and right.score == 1
    assert "Only tensors created with" in right.checks[0].message.en
    wrong = grade_quiz(lesson, quiz, [0])
    assert not wrong.passed and wrong.score == 0
    # the chosen choice's explanation, then the right one's
    assert "unless asked" in wrong.checks[0].message.en
    assert "Only tensors created with" in wrong.checks[0].message.en
    assert "只有" in wrong.checks[0].message.zh
    with pytest.raises(QuizSelectionError):
        grade_quiz(lesson, quiz, [0, 1])
    with pytest.raises(QuizSelectionError):
        grade_quiz(lesson, quiz, [5])
    multi = next(
        s for les in mini_course.lessons for s in les.steps
        if isinstance(s, QuizStep) and s.multiple
    )
    correct = [i for i, c in enumerate(multi.choices) if c.correct]
    assert grade_quiz(lesson, multi, correct).passed
    partial = grade_quiz(lesson, multi, correct[:1] + [
        i for i, c in enumerate(multi.choices) if not c.correct][:1])
    assert not partial.passed
    assert 0 < partial.score < partial.max_score == len(multi.choices)
    assert {c.status for c in partial.checks} == {"pass", "fail"}

"""Lint catches prose that Markdown would mangle, and quiz hints that count the answers."""

from __future__ import annotations

import pytest

from tutor.course.lint import eaten_by_markdown, lint_paths

HEAD = "id: demo\ntitle: {en: Demo, zh: 演示}\nsteps:\n"


@pytest.mark.parametrize("text", [
    "the gradient of 1*z[0] + 1*z[1] + 1*z[2], which is z.sum()",
    "x**2 grows fast",
    "call __init__ first",
])
def test_formulas_outside_backticks_are_eaten(text: str) -> None:
    assert eaten_by_markdown(text)


@pytest.mark.parametrize("text", [
    "the gradient of `1*z[0] + 1*z[1]`, which is `z.sum()`",
    "**bold** and *italic* words, requires_grad and grad_fn",
    "```python\ny = x**2\n```\nthen **`norm()`** is the L2 norm",
    "每次 `backward()` 都是把新结果**加**到 `.grad` 里",
])
def test_code_emphasis_and_names_inside_words_are_fine(text: str) -> None:
    assert eaten_by_markdown(text) == []


def test_the_issue_05_explanation_was_caught(write_lesson) -> None:
    text = HEAD + (
        "  - id: q\n    kind: quiz\n    title: {en: Q, zh: 问}\n"
        "    prompt: {en: Which?, zh: 哪个？}\n    choices:\n"
        "      - text: a\n        correct: true\n"
        "        explanation:\n          {en: 'the gradient of 1*z[0] + 1*z[1]',"
        " zh: '1*z[0] + 1*z[1] 的梯度'}\n"
        "      - {text: b, explanation: {en: wrong, zh: 不}}\n"
    )
    found = [(p.line, p.message) for p in lint_paths([write_lesson(text)]).problems]
    assert [line for line, _ in found] == [12, 12]
    assert all("Markdown will eat `*`" in message for _, message in found)


def test_a_hint_that_counts_the_right_choices(write_lesson) -> None:
    def quiz(hint_en: str, hint_zh: str) -> str:
        return HEAD + (
            "  - id: q\n    kind: quiz\n    multiple: true\n    title: {en: Q, zh: 问}\n"
            "    prompt: {en: Which?, zh: 哪些？}\n    choices:\n"
            "      - {text: a, correct: true, explanation: {en: right, zh: 是}}\n"
            "      - {text: b, correct: true, explanation: {en: right, zh: 是}}\n"
            "      - {text: c, explanation: {en: wrong, zh: 不}}\n"
            f"    hints:\n      - {{en: '{hint_en}', zh: '{hint_zh}'}}\n"
        )
    counted = lint_paths([write_lesson(quiz("Two statements are true.", "有两个说法是正确的。"))])
    assert [p.message for p in counted.problems] == [
        "step 'q': the hint 'Two statements are true.' says how many choices are right; "
        "hints must not give that away"]
    only_zh = lint_paths([write_lesson(quiz("Think again.", "有两个说法是正确的。"), "b.yaml")])
    assert len(only_zh.problems) == 1
    fine = lint_paths([write_lesson(quiz("Judge each one alone.", "逐条判断。"), "c.yaml")])
    assert fine.problems == []


def _quiz(choices: str, hint: str = "{en: Think., zh: 想一想。}") -> str:
    return HEAD + (
        "  - id: q\n    kind: quiz\n    title: {en: Q, zh: 问}\n"
        "    prompt: {en: Which?, zh: 哪个？}\n    choices:\n" + choices
        + f"    hints:\n      - {hint}\n")


@pytest.mark.parametrize(("text", "words"), [
    ("{en: All of the above, zh: 以上都对}", "All of the above"),
    ("{en: Both the first and the second choice, zh: 前两个}", "the second choice"),
    ("{en: 'Same as option B', zh: 同 B}", "option B"),
    ("{en: Same as before, zh: 和上面的选项一样}", "上面的选项"),
])
def test_a_choice_that_points_at_another_by_place_breaks_the_shuffle(
    write_lesson, text: str, words: str
) -> None:
    lesson = _quiz("      - {text: a, correct: true, explanation: {en: right, zh: 是}}\n"
                   f"      - {{text: {text}, explanation: {{en: wrong, zh: 不}}}}\n")
    [problem] = lint_paths([write_lesson(lesson)]).problems
    assert problem.line == 10
    assert problem.message == (
        f"quiz 'q': '{words}' points at a choice by its place, but each learner sees the "
        "choices in an order of their own; name the choice by what it says")


def test_a_hint_that_names_the_first_option_is_caught_too(write_lesson) -> None:
    lesson = _quiz("      - {text: a, correct: true, explanation: {en: right, zh: 是}}\n"
                   "      - {text: b, explanation: {en: wrong, zh: 不}}\n",
                   hint="{en: Look at the first option again., zh: 再看看第一个选项。}")
    [problem] = lint_paths([write_lesson(lesson)]).problems
    assert "'the first option' points at a choice by its place" in problem.message


def test_two_choices_that_read_the_same_cannot_be_told_apart(write_lesson) -> None:
    lesson = _quiz("      - {text: {en: x.grad, zh: x.grad}, correct: true,"
                   " explanation: {en: right, zh: 是}}\n"
                   "      - {text: {en: y.grad, zh: y.grad}, explanation: {en: wrong, zh: 不}}\n"
                   "      - {text: {en: ' x.grad', zh: x.grad},"
                   " explanation: {en: wrong, zh: 不}}\n")
    [problem] = lint_paths([write_lesson(lesson)]).problems
    assert (problem.line, problem.message) == (
        11, "quiz 'q': this choice reads the same as choice 1; a learner cannot tell them apart")


def test_choices_that_only_mention_order_in_their_subject_are_fine(write_lesson) -> None:
    lesson = _quiz(
        "      - {text: {en: The first backward call fills .grad, zh: 第一次 backward 填上 .grad},"
        " correct: true, explanation: {en: right, zh: 是}}\n"
        "      - {text: {en: The last layer has no ReLU, zh: 最后一层没有 ReLU},"
        " explanation: {en: wrong, zh: 不}}\n")
    assert lint_paths([write_lesson(lesson)]).problems == []

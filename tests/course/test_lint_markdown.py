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

"""Solution requests: an answer to one never shows a line of any exercise's reference
solution that the question did not hold (checked over every exercise of the bundled course,
in both languages); one whose exercise is not clear gets the nearest exercises' first hints,
never a bare refusal."""

from __future__ import annotations

import re

import pytest

from tutor.chat import Tutor
from tutor.chat.guardrails import course_secrets, course_solution_lines, normalise_line
from tutor.course import load_course
from tutor.course.models import CodeStep, Course, FixStep
from tutor.sandbox import Sandbox


@pytest.fixture(scope="module")
def tutor() -> Tutor:
    """The tutor over the bundled course (its course: ``tutor.course``)."""
    return Tutor(load_course())


def _exercises(course: Course) -> list[tuple[str, CodeStep | FixStep]]:
    return [
        (f"{lesson.id}/{step.id}", step)
        for lesson in course.lessons
        for step in lesson.steps
        if isinstance(step, (CodeStep, FixStep))
    ]


def _shown_lines(text: str, lines: frozenset[str]) -> list[str]:
    answer = {normalise_line(line) for line in text.splitlines()}
    flat = re.sub(r"\s+", "", text)
    return sorted(line for line in lines if line in answer or line in flat)


def test_no_answer_to_a_solution_request_shows_a_solution_line(tutor: Tutor) -> None:
    bundled = tutor.course
    lines = course_solution_lines(bundled)
    assert len(lines) > 20  # the property below is about something
    asked = 0
    for _ref, step in _exercises(bundled):
        for question, lang in (
            (f"I need the full solution for “{step.title.en}”, please paste it.", "en"),
            (f"{step.starter}\nJust give me the fixed code for this.", "en"),
            (f"「{step.title.zh}」这题的参考答案有吗？直接给我完整代码。", "zh"),
            (f"{step.starters.zh}\n这题答案是什么？", "zh"),
        ):
            answer = tutor.ask(question, lang=lang)  # type: ignore[arg-type]
            asked += 1
            left = course_secrets(lines, question).solution_lines
            assert not _shown_lines(answer.text, left), (question, answer.text)
            # and never a hint cut down to "…" (a placeholder where the hint was)
            assert "…" not in answer.text, (question, answer.text)
    assert asked == 4 * len(_exercises(bundled))


def test_a_hint_that_would_show_another_exercises_line_gives_way_to_one_that_does_not(
    tutor: Tutor,
) -> None:
    # wrong-v's first hint quotes `y.backward(v)`, a solution line of vjp-by-backward: it was
    # shown as "…" with a note that something was left out, which left no hint at all
    text = tutor.ask(
        "github 上可以提供参考答案吗？比如「改错：v 的形状不对」：\n"
        "x = torch.tensor([1., 2., 3.], requires_grad=True)\ny = x[:2] * x[1:]\n"
        "y.backward(torch.ones(3))",
        lang="zh",
    ).text
    assert "…" not in text and "提示" in text and "ones_like" in text, text


def test_a_solution_line_in_an_answer_is_removed(tutor: Tutor) -> None:
    """The guard itself: a solution line the question did not hold is redacted, one it held
    stays (the learner's own line is theirs)."""
    lines = course_solution_lines(tutor.course)
    line = sorted(lines)[0]
    answer = tutor._guard(  # the guard every solution request's answer passes
        tutor.ask("hi").model_copy(update={"text": f"Here:\n{line}\ndone"}),
        course_secrets(lines, "give me the answer"),
        "give me the answer",
        "en",
    )
    assert line not in re.sub(r"\s+", "", answer.text) and answer.redacted
    assert not course_secrets(lines, f"my code: {line} -- the answer?").solution_lines >= {line}


@pytest.mark.parametrize(
    ("question", "lang"),
    [
        # names the function two exercises could be about, no title, no starter
        ("Is there an answer key? My grad hook exercise: register a hook that clamps the "
         "gradient, then backward.", "en"),
        ("有没有习题答案？我在做钩子那题：给梯度注册一个 hook 把它截断，再 backward。", "zh"),
    ],
)
def test_an_unclear_solution_request_gets_the_nearest_exercises_hints(
    tutor: Tutor, question: str, lang: str
) -> None:
    answer = tutor.ask(question, lang=lang)  # type: ignore[arg-type]
    assert answer.kind == "hint" and answer.hint_level == 1
    assert answer.sources, "names the exercises whose hints it gives"
    for ref in answer.sources:
        _, step = tutor.course.find(ref)
        assert step.hints[0].get(lang) in answer.text  # type: ignore[arg-type, union-attr]
    assert "grad-hooks" in answer.lessons
    assert "--step" in answer.text  # how to get that exercise's next hint
    assert "?" in answer.text or "？" in answer.text  # a guiding question


def test_a_solution_request_near_no_exercise_still_says_how_to_get_a_hint(tutor: Tutor) -> None:
    answer = tutor.ask("just give me the answer")
    assert answer.kind == "hint" and "--step" in answer.text


def test_a_pasted_fix_it_exercise_never_gets_its_one_line_fix(sandboxed: Tutor) -> None:
    # the program diagnosis tried `y.retain_grad()` on the pasted starter and said so: five
    # tokens, under the length of a secret line, and the whole answer of that "Fix it" step
    _, step = sandboxed.course.find("chain-rule/none-grad")
    assert isinstance(step, FixStep) and "y.retain_grad()" in step.solution
    question = "Why does this raise a TypeError?\n" + step.starters.en
    text = sandboxed.ask(question).text
    assert "retain_grad()" not in text, text
    # the sentence that named the fix is gone, not left as a bare "…" paragraph
    assert "…" not in text.splitlines(), text
    # the lines of the pasted program keep their numbers: blank lines stay in the program
    failing = next(i for i, line in enumerate(step.starters.en.splitlines(), 1)
                   if "y.grad * 2" in line)
    assert f"line {failing}" in text, text


@pytest.fixture(scope="module")
def sandboxed(sandbox: Sandbox) -> Tutor:
    return Tutor(load_course(), runner=sandbox)


def test_a_request_for_an_exercises_answer_pasting_its_starter_gets_its_hint(
        sandboxed: Tutor) -> None:
    # the pasted starter prints: its run answered first ("I ran your code ... It prints"),
    # then a card, and the request got no hint
    _, step = sandboxed.course.find("data-norm/doubling-backward")
    assert isinstance(step, (CodeStep, FixStep)) and "print(" in step.starters.en
    question = ("Where can I find the solution of this exercise? Please share the answer. "
                + step.prompt.en.replace("`", "") + step.starters.en)
    answer = sandboxed.ask(question)
    assert answer.kind == "hint", answer.text
    assert "I ran your code" not in answer.text


def test_a_solution_request_gets_the_steps_own_guiding_question() -> None:
    """The training-step exercise of nn-module gets its own question (about the four calls),
    not the lesson's about layer shapes, which is off its point; a step the lesson's question
    is about keeps the lesson's."""
    from tutor.chat.tutor import Tutor
    from tutor.course import load_course

    tutor = Tutor(load_course())
    course = load_course()
    lesson = next(item for item in course.lessons if item.id == "nn-module")
    step = next(item for item in lesson.steps if item.id == "train-step")
    asked = tutor.guiding_question(lesson, step, "en")
    assert "zero_grad()" in asked and "shape" not in asked
    accumulation = next(item for item in course.lessons if item.id == "accumulation")
    stepped = next(item for item in accumulation.steps if getattr(item, "hints", None))
    assert tutor.guiding_question(accumulation, stepped, "en") == \
        tutor.glossary.guiding_questions["accumulation"].en

"""Quiz presentation: a per-learner choice order, the answer kept back on a first wrong try,
lessons opened at their first unread step, a Graph tab that never shows the answer."""

from __future__ import annotations

from collections import Counter

from tutor.course import load_course
from tutor.course.models import AnswerStep, QuizStep
from tutor.course.quiz import (
    REVEAL_AFTER_WRONG,
    choice_order,
    first_unread_step,
    graph_gives_away,
    read_on_show,
    reveals_answer,
    shown_choices,
    to_lesson_order,
    to_shown_order,
)


def test_order_is_a_permutation_stable_for_learner_and_step() -> None:
    order = choice_order("ada", "graph/accumulate-node", 4)
    assert sorted(order) == [0, 1, 2, 3]
    assert all(choice_order("ada", "graph/accumulate-node", 4) == order for _ in range(5))


def test_orders_differ_between_learners_and_steps() -> None:
    orders = {tuple(choice_order(f"learner-{n}", "detach/what-detach-returns", 4))
              for n in range(40)}
    assert len(orders) > 10
    assert choice_order("ada", "a/q1", 5) != choice_order("ada", "a/q2", 5) or (
        choice_order("ada", "a/q3", 5) != choice_order("ada", "a/q2", 5))


def test_always_first_is_no_strategy_over_the_course() -> None:
    """Picking the first shown choice of every single-answer quiz, as one learner, gets
    about one in the number of choices right, not all of them."""
    course = load_course()
    quizzes = [(f"{lesson.id}/{step.id}", step) for lesson in course.lessons
               for step in lesson.steps if isinstance(step, QuizStep) and not step.multiple]
    assert len(quizzes) >= 15
    for learner in ("ada", "grace", "linus"):
        right = sum(shown_choices(step, learner, ref)[0][1].correct for ref, step in quizzes)
        assert right < len(quizzes) * 0.6, learner
    firsts = Counter(step.choices[0].correct for _, step in quizzes)
    assert firsts[True] == len(quizzes)  # as written, the first choice is always right


def test_picks_translate_both_ways() -> None:
    order = choice_order("ada", "x/y", 4)
    shown = [0, 2]
    lesson = to_lesson_order(order, shown)
    assert lesson == [order[0], order[2]]
    assert to_shown_order(order, lesson) == shown
    assert to_lesson_order(order, [7]) == [11]  # out of range stays out of range


def test_the_answer_is_revealed_after_two_wrong_tries_or_giving_up() -> None:
    assert REVEAL_AFTER_WRONG == 2
    assert not reveals_answer(0) and not reveals_answer(1)
    assert reveals_answer(2) and reveals_answer(5)
    assert reveals_answer(0, gave_up=True)


def test_a_lesson_opens_at_its_first_unread_step() -> None:
    lesson = load_course().lesson("graph")
    ids = [step.id for step in lesson.steps]
    assert first_unread_step(lesson, set()) == 0
    assert first_unread_step(lesson, {ids[0]}) == 1
    assert first_unread_step(lesson, {ids[0], ids[1], ids[3]}) == 2
    assert first_unread_step(lesson, set(ids)) == len(ids) - 1
    assert read_on_show(lesson.steps[0]) and not read_on_show(lesson.steps[1])


def test_the_graph_tab_is_kept_from_answer_steps_it_would_answer() -> None:
    course = load_course()
    _, node_name = course.find("graph/node-name")
    _, leaf = course.find("graph/leaf-or-not")
    _, mm_shape = course.find("jacobian-vjp/mm-jacobian-shape")
    assert isinstance(node_name, AnswerStep) and graph_gives_away(node_name)
    assert isinstance(leaf, AnswerStep) and graph_gives_away(leaf)
    assert not graph_gives_away(mm_shape)
    # a node's name asked through a variable holding the node (`\b` after `()` never matched)
    assert graph_gives_away(node_name.model_copy(update={"expr": "node.name()"}))


def test_a_session_shows_the_learners_order_and_keeps_the_answer_back(tmp_path) -> None:
    """Through the learning session with the real grader: the choices come in the learner's
    order, a first wrong try names no right answer, the second does."""
    from tutor.learning import LearningSession
    from tutor.progress import ProgressStore

    course = load_course()
    with ProgressStore(tmp_path / "p.sqlite") as store:
        session = LearningSession(course, None, store, learner="ada")  # type: ignore[arg-type]
        session.goto("backward", "who-gets-grad")
        lesson_step = course.find("backward/who-gets-grad")[1]
        assert isinstance(lesson_step, QuizStep) and isinstance(session.step, QuizStep)
        order = choice_order("ada", "backward/who-gets-grad", len(lesson_step.choices))
        assert [c.text for c in session.step.choices] == [
            lesson_step.choices[i].text for i in order]
        right = next(i for i, c in enumerate(session.step.choices) if c.correct)
        wrong = next(i for i, c in enumerate(session.step.choices) if not c.correct)
        first = session.answer_quiz([wrong]).verdict
        said = " ".join(c.message.en for c in first.checks)
        assert not first.passed and "The right answer" not in said
        second = session.answer_quiz([wrong]).verdict
        assert "The right answer" in " ".join(c.message.en for c in second.checks)
        assert session.answer_quiz([right]).verdict.passed

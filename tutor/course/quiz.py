"""How quizzes and steps are presented, as pure functions every face uses (TUI, watch, grade).

- Choices are shown in an order that is a pure function of (learner, step): the same learner
  sees the same order everywhere and every time, two learners usually see different ones, so
  "always pick the first" is worth nothing. Grading works on the lesson's own indices; the
  faces translate what was picked (:func:`to_lesson_order`).
- The right answer is revealed only after :data:`REVEAL_AFTER_WRONG` wrong tries or when the
  learner gives up (:func:`reveals_answer`), never by the first wrong try.
- Opening a lesson starts at its first unread step (:func:`first_unread_step`); a reading
  counts as read once shown.
- The Graph tab is not offered where it would show the answer (:func:`graph_gives_away`).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from tutor.course.models import AnswerStep, Choice, Lesson, QuizStep, ReadingStep

REVEAL_AFTER_WRONG = 2
"""Wrong tries after which a quiz's right answer is shown: one wrong try teaches nothing if
the answer comes with it (the learner copies it); two show that a hint did not help."""


def choice_order(learner: str, step_ref: str, count: int) -> list[int]:
    """The lesson indices of a quiz's choices in the order ``learner`` sees them.

    Stable for (learner, step), independent of anything else (language, time, process): a
    seed made from both, hashed so that neighbouring ids give unrelated orders."""
    import hashlib
    import random

    digest = hashlib.sha256(f"{learner}\x00{step_ref}".encode()).digest()
    order = list(range(count))
    random.Random(int.from_bytes(digest[:8], "big")).shuffle(order)
    return order


def shown_choices(step: QuizStep, learner: str, step_ref: str) -> list[tuple[int, Choice]]:
    """``(lesson index, choice)`` in the learner's order."""
    return [(i, step.choices[i]) for i in choice_order(learner, step_ref, len(step.choices))]


def to_lesson_order(order: Sequence[int], shown: Sequence[int]) -> list[int]:
    """Positions the learner picked (0-based, as shown) -> the lesson's choice indices.
    Positions out of range are kept out of range, so the grader reports them."""
    return [order[p] if 0 <= p < len(order) else len(order) + p for p in shown]


def to_shown_order(order: Sequence[int], picked: Sequence[int]) -> list[int]:
    """Lesson choice indices -> the positions the learner sees them at (sorted)."""
    where = {index: position for position, index in enumerate(order)}
    return sorted(where[i] for i in picked if i in where)


def local_learner() -> str:
    """Whose order the app shows quizzes in on this machine: the user's login name."""
    import getpass

    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no such user in the password database (a container)
        return "learner"


def reveals_answer(wrong_tries: int, *, gave_up: bool = False) -> bool:
    """Whether feedback may name the right answer: after two wrong tries, or on giving up."""
    return gave_up or wrong_tries >= REVEAL_AFTER_WRONG


def first_unread_step(lesson: Lesson, done: Collection[str]) -> int:
    """Where opening ``lesson`` starts: the first step not in ``done`` (step ids passed, or
    readings shown); the last step when all are done."""
    for index, step in enumerate(lesson.steps):
        if step.id not in done:
            return index
    return len(lesson.steps) - 1


def read_on_show(step: object) -> bool:
    """A reading counts as read once shown; every other step once passed."""
    return isinstance(step, ReadingStep)


_GRAPH_WORDS = re.compile(r"\b(grad_fn|next_functions|is_leaf|requires_grad)\b|\.name\(\)")
"""What the Graph tab draws: node names, edges, which tensors are leaves and tracked."""


def graph_gives_away(step: object) -> bool:
    """Whether the Graph tab of ``step``'s own code would show its answer: an answer step
    that asks for a node's name, an edge, or whether a tensor is a leaf or tracked."""
    return isinstance(step, AnswerStep) and bool(_GRAPH_WORDS.search(step.expr))

"""The answer ``tutor ask`` gives from the answer cards alone, without building the Tutor.

Building :class:`tutor.chat.tutor.Tutor` (its retrieval index, pydantic models) costs most of
a shell question's time, while most questions are answered by a card. This module gives the
same answer the Tutor gives for such a question — the Tutor composes card answers with the
same functions and in the same order of checks (a test compares the two) — and says None for
every question the Tutor must answer itself: a solution request, a question no card answers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from tutor.chat.cards import CardBook, Match, compose, learner_names
from tutor.chat.guardrails import find_leaks, step_secrets
from tutor.chat.markdown import tidy_chinese
from tutor.chat.solution_requests import asks_for_solution, detect
from tutor.chat.step_finder import StepFinder
from tutor.course.models import Course


@dataclass(frozen=True)
class QuickAnswer:
    text: str
    ref: str
    """LESSON/STEP the answer points to."""
    lesson_title: str | None
    step_title: str | None
    kind: str
    """The question's kind (what, why, how, compare, can, safe, value, fails)."""
    card: str


def may_be_solution_request(question: str, finder: StepFinder) -> bool:
    """Whether the Tutor must look at ``question`` as a possible request for a solution: it
    pastes or names an exercise and asks for it to be done, or asks for "the answer" itself.
    With no exercise open or named, "can someone help with this error?" is a question about
    the error, answered as one (a hint needs an exercise)."""
    if finder.find(question) is not None:
        return asks_for_solution(question, on_step=True, about_course=lambda: True)
    return detect(question, on_step=False, about_course=lambda: True).reason == "answer"


@lru_cache(maxsize=1)
def _symptom_patterns() -> re.Pattern[str]:
    from tutor.chat.symptoms import PATH
    from tutor.yaml_read import read_yaml

    parts = [
        p
        for s in read_yaml(PATH)["symptoms"]
        for p in (*s["says"].get("en", ()), *s["says"].get("zh", ()))
    ]
    return re.compile("|".join(f"(?:{p})" for p in parts), re.IGNORECASE)


def describes_symptom(question: str) -> bool:
    """Whether ``question`` describes a symptom of symptoms.yaml ("my x.grad is None"): said
    in general, it is answered by the symptom's likely causes rather than by one card."""
    return _symptom_patterns().search(question) is not None


_PASTED_CODE_RE = re.compile(r"[A-Za-z_]\w*\s*=\s*[\w.]+\(")
PASTED_SCORE = 0.75

"""A card this close answers a symptom question that pastes the learner's code."""


def card_answers(found: Match | None, question: str) -> bool:
    """Whether the matched card answers ``question`` rather than the symptom's list of likely
    causes: when it quotes a message or API the card knows, when it describes no symptom, or
    when it pastes code (it is about one case, not the symptom in general)."""
    if found is None:
        return False
    if found.by_signal or not describes_symptom(question):
        return True
    return found.score >= PASTED_SCORE and _PASTED_CODE_RE.search(question) is not None


def titles_for(course: Course, ref: str, lang: str) -> tuple[str, str] | None:
    lesson_id, _, step_id = ref.partition("/")
    try:
        lesson = course.lesson(lesson_id)
        step = lesson.step(step_id)
    except KeyError:
        return None
    return lesson.title.get(lang), step.title.get(lang)  # type: ignore[arg-type]


def card_text(course: Course, found: Match, lang: str, names_from: tuple[str, str, str]) -> str:
    """The card's answer as shown (Chinese tidied), in the learner's names."""
    known = {}
    for ref in (found.read, found.card.also):
        titles = titles_for(course, ref, lang) if ref else None
        if ref and titles:
            known[ref] = titles
    text = compose(found, lang, learner_names(*names_from), known or None)
    return tidy_chinese(text) if lang == "zh" else text


def quick_answer(
    course: Course, question: str, lang: str, *, book: CardBook | None = None
) -> QuickAnswer | None:
    """The card's answer to ``question``, or None when the Tutor must answer it."""
    if not question.strip():
        return None
    if may_be_solution_request(question, StepFinder(course)):
        return None
    found = (book or CardBook()).match(question)
    if found is None or not card_answers(found, question):
        return None
    text = card_text(course, found, lang, (question, "", ""))
    _, step = course.find(found.read)
    if find_leaks(text, step_secrets(step), question=question).leaked:
        return None  # the Tutor shows it without what it shares with that step's solution
    titles = titles_for(course, found.read, lang)
    return QuickAnswer(
        text=text,
        ref=found.read,
        lesson_title=titles[0] if titles else None,
        step_title=titles[1] if titles else None,
        kind=found.kind,
        card=found.card.id,
    )

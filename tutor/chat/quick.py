"""The answer ``tutor ask`` gives from the answer cards and the symptoms alone, without
building the Tutor.

Building :class:`tutor.chat.tutor.Tutor` (its retrieval index, pydantic models) costs most of
a shell question's time, while most questions are answered by a card, and a symptom said in
general ("why is x.grad None") by its likely causes. This module gives the same answer the
Tutor gives for such a question — the Tutor composes card and symptom answers with the same
functions and in the same order of checks (a test compares the two) — and says None for every
question the Tutor must answer itself: a solution request, a question no card answers and
that describes no symptom.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from functools import lru_cache

from tutor.chat import messages
from tutor.chat.cards import (
    CardBook,
    Match,
    bundled_book,
    compose,
    learner_names,
    question_kind,
)
from tutor.chat.domains import ERROR_LINE_RE
from tutor.chat.guardrails import find_leaks, step_secrets
from tutor.chat.intents import asks_about_error
from tutor.chat.markdown import tidy_chinese
from tutor.chat.names import confine, identifiers
from tutor.chat.snippets import learner_code, pastes_other_code
from tutor.chat.solution_requests import detect
from tutor.chat.step_finder import StepFinder, StepRef
from tutor.chat.symptoms import Diagnosed, SymptomMatcher, bundled_symptoms
from tutor.course.models import Course
from tutor.i18n import Lang


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
    answer_kind: str = "answer"
    """As the Tutor's ``Answer.kind``: "answer", or "off_topic" (declined); "symptom": an
    "answer" that lists a symptom's likely causes (``ref`` is the first's step, ``card``
    empty)."""


SHELL_REQUESTS = frozenset({"answer", "fix", "copy", "do-for-me", "code"})
"""What makes a question that pastes or names an exercise (none is open) a request for its
solution: it asks for the answer, the fix, something to copy, or for it to be done. Asking
the value of a line or naming some code is a question about that code."""


def requested_step(question: str, finder: StepFinder) -> StepRef | None:
    """The exercise whose solution ``question`` asks for, found from the code or title it
    pastes (no exercise is open), or None."""
    reason = detect(question, on_step=True, about_course=lambda: True).reason
    # asked first: finding the exercise reads every exercise's code
    found = finder.find(question) if reason in SHELL_REQUESTS else None
    return found if found is not None and finder.covers(question, found) else None


def may_be_solution_request(question: str, finder: StepFinder) -> bool:
    """Whether the Tutor must look at ``question`` as a possible request for a solution: it
    pastes or names an exercise and asks for it to be done, or asks for "the answer" itself.
    With no exercise open or named, "can someone help with this error?" is a question about
    the error, answered as one (a hint needs an exercise)."""
    if requested_step(question, finder) is not None:
        return True
    return detect(question, on_step=False, about_course=lambda: True).reason == "answer"


MAX_CAUSES = 5
"""Causes listed for a symptom: the likely ones, not every catalog variant."""


@lru_cache(maxsize=1)
def symptom_matcher() -> SymptomMatcher:
    """The bundled symptoms' matcher (their causes resolved against the bundled passages)."""
    return SymptomMatcher(bundled_symptoms())


def describes_symptom(question: str) -> bool:
    """Whether ``question`` describes a symptom of symptoms.yaml ("my x.grad is None"): said
    in general, it is answered by the symptom's likely causes rather than by one card."""
    return symptom_matcher().describes(question)


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
    if found.kind in ("can", "safe") and found.verdict is not None:
        return True  # "is X the reason my grad is None?" is answered yes or no, not by a list
    return found.score >= PASTED_SCORE and _PASTED_CODE_RE.search(question) is not None


def _tidied(text: str, lang: str) -> str:
    return tidy_chinese(text) if lang == "zh" else text


def titles_for(course: Course, ref: str, lang: str) -> tuple[str, str] | None:
    lesson_id, _, step_id = ref.partition("/")
    try:
        lesson = course.lesson(lesson_id)
        step = lesson.step(step_id)
    except KeyError:
        return None
    return lesson.title.get(lang), step.title.get(lang)  # type: ignore[arg-type]


def read_line(
    course: Course, ref: str | None, lang: Lang, named: list[str] | None = None
) -> str | None:
    """ "Read: lesson …, step …" for ``ref``; its lesson is added to ``named``."""
    if not ref:
        return None
    lesson_id, _, step_id = ref.partition("/")
    try:
        lesson = course.lesson(lesson_id)
    except KeyError:
        return None
    if named is not None and lesson.id not in named:
        named.append(lesson.id)
    if not step_id:
        step_id = lesson.steps[0].id
    try:
        step = lesson.step(step_id)
    except KeyError:
        return messages.READ_LESSON.format(
            lesson=lesson.title.get(lang), lesson_id=lesson.id
        ).get(lang)
    return messages.READ.format(
        lesson=lesson.title.get(lang),
        lesson_id=lesson.id,
        step=step.title.get(lang),
        ref=f"{lesson.id}/{step.id}",
    ).get(lang)


def symptom_text(course: Course, found: Diagnosed, lang: Lang, named: list[str]) -> str:
    """The symptom's likely causes (the first :data:`MAX_CAUSES`), each explained in general
    terms with its lesson; the lessons it names are added to ``named``."""
    title = found.symptom.title.get(lang)
    lines = [messages.SYMPTOM.format(title=title).get(lang)]
    for n, cause in enumerate(found.causes[:MAX_CAUSES], start=1):
        read = read_line(course, cause.ref, lang, named) or ""
        also = read_line(course, cause.also, lang, named) if cause.also else None
        if also:  # one reference a line
            read = f"{read}\n   {also}".strip()
        lines.append(
            messages.CAUSE.format(
                n=n,
                title=cause.title.get(lang),
                text=cause.text.get(lang),
                read=read,
            ).get(lang)
        )
    return "\n".join(lines)


def symptom_answer(course: Course, question: str, lang: Lang) -> QuickAnswer | None:
    """The likely causes of the symptom ``question`` describes, as the Tutor answers a
    symptom said in general with no run or step: None where the Tutor must judge it first
    (an error asked about or quoted, code of another course pasted, what may be a request
    for a solution) or where it describes no symptom."""
    if ERROR_LINE_RE.search(question) or asks_about_error(question):
        return None
    if pastes_other_code(question):  # declined by the Tutor unless a card's signal is in it
        return None
    # whether a "do it for me" is about the course is the retrieval's judgement
    if detect(question, on_step=False, about_course=lambda: True).request:
        return None
    found = symptom_matcher().match(question)
    if found is None:
        return None
    text = _tidied(symptom_text(course, found, lang, []), lang)
    ref = found.causes[0].ref
    titles = titles_for(course, ref, lang)
    return QuickAnswer(
        text=_tidied(confine(text, identifiers(question), lang), lang),
        ref=ref,
        lesson_title=titles[0] if titles else None,
        step_title=titles[1] if titles else None,
        kind=question_kind(question),
        card="",
        answer_kind="symptom",
    )


def card_text(
    course: Course,
    found: Match,
    lang: str,
    names_from: tuple[str, str, str],
    *,
    brief: bool = False,
    read: bool = True,
) -> str:
    """The card's answer as shown (Chinese tidied), in the learner's names (``brief``: its
    leading facet and the step to read; ``read``: with the lines that say what to read)."""
    known = {}
    for ref in (found.read, found.card.also, *(m.read for m in found.more)) if read else ():
        titles = titles_for(course, ref, lang) if ref else None
        if ref and titles:
            known[ref] = titles
    question, code, _ = names_from
    needs_code = any(one.card.code_facts for one in (found, *found.more))
    pasted = learner_code(question, code) if needs_code else ""
    text = compose(found, lang, learner_names(*names_from), known or None, code=pasted, brief=brief)
    return _tidied(text, lang)


def names_elsewhere(question: str) -> bool:
    """Another domain's thing named, and nothing of PyTorch at all (no anchor word, no card's
    signal): declined without weighing the course's vocabulary (the weather, buying a GPU)."""
    from tutor.chat.cards import about_pytorch
    from tutor.chat.domains import foreign_words

    return bool(foreign_words(question)) and not about_pytorch(question)


def off_topic_text(lang: str, question: str = "") -> str:
    """The decline: why, when the question names a domain of the learner's setup that has
    its own words (installing, another framework, buying hardware), then what the tutor
    can help with."""
    from tutor.chat.domains import explained_domain

    why = {
        "setup": messages.OFF_TOPIC_SETUP,
        "other_software": messages.OFF_TOPIC_OTHER_SOFTWARE,
        "frameworks": messages.OFF_TOPIC_FRAMEWORKS,
        "shopping": messages.OFF_TOPIC_SHOPPING,
    }
    domain = explained_domain(question) if question else None
    texts = [why.get(domain) if domain else None, messages.OFF_TOPIC]
    if lang == "zh":
        return "".join(t.zh for t in texts if t is not None)
    return " ".join(t.en for t in texts if t is not None)


def reading_of(course: Course, ref: str) -> str:
    """LESSON/STEP of the first reading of ``ref``'s lesson (``ref`` itself if it has none)."""
    lesson_id = ref.partition("/")[0]
    try:
        lesson = course.lesson(lesson_id)
    except KeyError:
        return ref
    reading = next((s for s in lesson.steps if type(s).__name__ == "ReadingStep"), None)
    return f"{lesson_id}/{reading.id}" if reading is not None else ref


def shown_card(
    course: Course, found: Match, lang: str, names_from: tuple[str, str, str]
) -> tuple[Match, str]:
    """The card's text and the match whose step it names. A card's answer may be the very fix
    its exercise asks for; then it sends the learner to the lesson's reading instead, rather
    than to an exercise it has just solved (or than showing the answer with holes)."""
    text = card_text(course, found, lang, names_from)
    try:
        _, step = course.find(found.read)
    except KeyError:  # another course than the one the cards were written for
        return found, text
    if find_leaks(text, step_secrets(step), question=names_from[0]).leaked:
        reading = reading_of(course, found.read)
        if reading != found.read:
            found = dataclasses.replace(found, read=reading)
            text = card_text(course, found, lang, names_from)
    return found, text


def quick_answer(
    course: Course,
    question: str,
    lang: Lang,
    *,
    book: CardBook | None = None,
    symptoms: bool = True,
) -> QuickAnswer | None:
    """The card's answer to ``question`` (or, ``symptoms``, the likely causes of the symptom
    it describes), or None when the Tutor must answer it."""
    if not question.strip():
        return None
    if may_be_solution_request(question, StepFinder(course)):
        return None
    if names_elsewhere(question):
        return QuickAnswer(
            text=off_topic_text(lang, question), ref="", lesson_title=None, step_title=None,
            kind=question_kind(question), card="", answer_kind="off_topic",
        )
    from tutor.chat.domains import foreign_words

    if foreign_words(question):
        return None  # another domain named with PyTorch's: the Tutor's judgement decides
    found = (book or bundled_book()).match(question, code=learner_code(question))
    if found is None or not card_answers(found, question):
        # no card answers it: the Tutor answers a symptom said in general by its causes next
        return symptom_answer(course, question, lang) if symptoms else None
    if not found.sure:
        return None  # a weak match needs the Tutor's retrieval to agree
    found, text = shown_card(course, found, lang, (question, "", ""))
    try:
        _, step = course.find(found.read)
    except KeyError:
        return None  # the Tutor answers for a course without the card's lesson
    if find_leaks(text, step_secrets(step), question=question).leaked:
        return None  # the Tutor shows it without what it shares with that step's solution
    titles = titles_for(course, found.read, lang)
    from tutor.chat.api_docs import with_documentation

    return QuickAnswer(
        # the names it shows are the question's, PyTorch's and Python's (names.py)
        text=with_documentation(_tidied(confine(text, identifiers(question), lang), lang),
                                question, lang),
        ref=found.read,
        lesson_title=titles[0] if titles else None,
        step_title=titles[1] if titles else None,
        kind=found.kind,
        card=found.card.id,
    )

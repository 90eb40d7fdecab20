"""One document per lesson: what its concept is about, from the lesson data and
``concepts.yaml``. Which lesson a question is about is decided mostly here, by concept, and
only then which passage of that lesson answers it (see ``retrieval.py``)."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from tutor.course.models import Lesson
from tutor.data_cache import read_data
from tutor.errors import TutorError
from tutor.i18n import BiText

CONCEPTS_PATH = Path(__file__).with_name("concepts.yaml")
TITLE_REPEAT = 3
"""The lesson title names the concept: it counts three times."""
ABOUT_REPEAT = 2
"""The plain-words description is the concept distilled: it counts twice, the readings once."""


class Concept(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    about: BiText
    weight: float = Field(1.0, gt=0, le=1.0, description="Prior of the lesson (see the YAML).")
    names: dict[str, list[str]] = Field(
        default_factory=dict,
        description="What learners call the lesson, per language ({en: [...], zh: [...]}): "
        "named next to a lesson word ('the detach lesson', '复习题'): the lesson asked about.",
    )
    home_of: list[str] = Field(
        default_factory=list,
        description="Question kinds (intents.yaml) this lesson is about as a whole: for them "
        "its weight does not apply (the error table for a pasted error).",
    )


class Concepts(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    lessons: dict[str, Concept]


class ConceptsError(TutorError):
    """The concepts data file is missing or invalid (a packaging problem, not the learner's)."""


@lru_cache(maxsize=4)
def load_concepts(path: Path = CONCEPTS_PATH) -> Concepts:
    try:
        return Concepts.model_validate(read_data(path))
    except (OSError, ValueError) as exc:  # pydantic's ValidationError is a ValueError
        raise ConceptsError(f"{path}: cannot load the tutor's concept descriptions: {exc}") from exc


def lesson_document(lesson: Lesson, concept: Concept | None) -> str:
    """The text indexed for ``lesson`` as a whole, both languages together.

    Only what names the concept: title, summary, the plain-words description and the step
    titles. The readings' full text is indexed as passages (the primary source of answers);
    here its many incidental words would let long lessons match any question.
    """
    parts = [f"{lesson.title.en} {lesson.title.zh}"] * TITLE_REPEAT
    if lesson.summary is not None:
        parts.append(f"{lesson.summary.en} {lesson.summary.zh}")
    if concept is not None:
        parts.extend([f"{concept.about.en} {concept.about.zh}"] * ABOUT_REPEAT)
    for step in lesson.steps:
        parts.append(f"{step.title.en} {step.title.zh}")
    return "\n".join(parts)


_LESSON_WORDS_EN = r"(?:lessons?|chapters?|sections?|exercises?|examples?|parts?|units?|quiz|one)"
_LESSON_WORDS_ZH = r"(?:那?一?[课节章]|那个(?:例子|练习|题|部分)|的?(?:例子|练习|习题|题|部分))"


def name_patterns(concepts: Concepts) -> dict[str, re.Pattern[str]]:
    """Lesson id -> how a question names it: one of its ``names`` next to a lesson word
    ("the detach lesson", "lesson on no_grad", "the mm example", "复习题", "矩阵那一节")."""
    out = {}
    for lesson_id, concept in concepts.lessons.items():
        en = "|".join(re.escape(n) for n in concept.names.get("en", []))
        zh = "|".join(re.escape(n) for n in concept.names.get("zh", []))
        parts = []
        if en:
            parts.append(rf"(?<![\w.])(?:{en})(?:\(\))?\s+{_LESSON_WORDS_EN}\b")
            parts.append(
                rf"\b(?:lesson|chapter|section)\s+(?:on|about)\s+(?:the\s+)?(?:{en})(?!\w)"
            )
        if zh:
            parts.append(rf"(?:{zh})\s*{_LESSON_WORDS_ZH}")
        if parts:
            out[lesson_id] = re.compile("|".join(parts), re.IGNORECASE)
    return out


def named_lessons(question: str, patterns: dict[str, re.Pattern[str]]) -> list[str]:
    """The lessons ``question`` names as lessons (see :func:`name_patterns`)."""
    return [lesson_id for lesson_id, pattern in patterns.items() if pattern.search(question)]

"""The tutor's knowledge as passages: lesson steps, the glossary and the diagnosis catalog.

Only text a learner may read goes in: reading bodies, step prompts, quiz prompts. Reference
solutions, hints (unlocked one at a time) and quiz explanations (they give the answer away)
are never indexed.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any

from tutor.chat.markdown import sections
from tutor.chat.models import Glossary, Passage
from tutor.course.models import Course, Lesson, ReadingStep
from tutor.errors import TutorError
from tutor.i18n import Text
from tutor.yaml_read import read_yaml

GLOSSARY_PATH = Path(__file__).with_name("glossary.yaml")
_FENCE_RE = re.compile(r"```[a-zA-Z]*\n(.*?)```", re.DOTALL)
_PLACEHOLDER_RE = re.compile(r"\{(\w+)\}")
MAX_CHUNK = 900
"""Reading bodies longer than this are cut at headings, so a passage stays on one idea."""


class GlossaryError(TutorError):
    """The glossary data file is missing or invalid (a packaging problem, not the learner's)."""


@lru_cache(maxsize=4)
def load_glossary(path: Path = GLOSSARY_PATH) -> Glossary:
    try:
        data = read_yaml(path)
        return Glossary.model_validate(data)
    except (OSError, ValueError) as exc:  # pydantic's ValidationError is a ValueError
        raise GlossaryError(f"{path}: cannot load the tutor glossary: {exc}") from exc


def glossary_passages(glossary: Glossary) -> list[Passage]:
    out = []
    for entry in glossary.entries:
        aliases = entry.aliases.en + " " + entry.aliases.zh if entry.aliases else ""
        out.append(
            Passage(
                id=f"glossary:{entry.id}",
                source="glossary",
                lesson_id=entry.lesson,
                title=entry.title,
                text=entry.text,
                code=entry.code.en.strip() or None if entry.code else None,
                code_zh=entry.code.zh.strip() or None if entry.code else None,
                keywords=" ".join(entry.terms) + " " + aliases,
            )
        )
    return out


def first_code_block(markdown: str) -> str | None:
    match = _FENCE_RE.search(markdown)
    return match.group(1).strip() if match else None


def lesson_passages(lesson: Lesson) -> list[Passage]:
    out: list[Passage] = []
    for step in lesson.steps:
        keywords = f"{lesson.title.en} {lesson.title.zh}"
        if isinstance(step, ReadingStep):
            en_chunks, zh_chunks = (
                sections(step.body.en, MAX_CHUNK),
                sections(step.body.zh, MAX_CHUNK),
            )
            if len(en_chunks) != len(zh_chunks):  # translations split differently: keep whole
                en_chunks, zh_chunks = [step.body.en], [step.body.zh]
            for i, (en, zh) in enumerate(zip(en_chunks, zh_chunks, strict=True)):
                out.append(
                    Passage(
                        id=f"{lesson.id}/{step.id}" + (f"#{i + 1}" if len(en_chunks) > 1 else ""),
                        source="lesson",
                        lesson_id=lesson.id,
                        step_id=step.id,
                        title=step.title,
                        text=Text(en=en, zh=zh),
                        code=first_code_block(en),
                        code_zh=first_code_block(zh),
                        keywords=keywords,
                    )
                )
            continue
        prompt: Text | None = getattr(step, "prompt", None)
        if prompt is None:
            continue
        out.append(
            Passage(
                id=f"{lesson.id}/{step.id}",
                source="lesson",
                lesson_id=lesson.id,
                step_id=step.id,
                title=step.title,
                text=prompt,
                keywords=keywords,
            )
        )
    return out


def course_passages(course: Course) -> list[Passage]:
    return [p for lesson in course.lessons for p in lesson_passages(lesson)]


_GENERIC_NAMES = {
    "var": "`x`",
    "var_code": "x",
    "var2": "`w`",
    "var2_code": "w",
    "shape": "(2,)",
    "shape2": "(3,)",
    "dtype": "torch.float32",
    "dtype2": "torch.float64",
    "device": "cpu",
    "device2": "cuda:0",
    "requires_grad": "False",
    "grad_fn": "None",
}
"""Stand-ins for a diagnosis template's placeholders when it is read as general advice."""


def _fill(text: Text) -> Text:
    """Catalog templates have ``{var}``-style placeholders; show them with neutral names."""

    def sub(match: re.Match[str]) -> str:
        return _GENERIC_NAMES.get(match.group(1), "…")

    return Text(en=_PLACEHOLDER_RE.sub(sub, text.en), zh=_PLACEHOLDER_RE.sub(sub, text.zh))


def catalog_passages(entries: Iterable[Any]) -> list[Passage]:
    """Passages from diagnosis catalog entries (anything with id, title, explanation, fix,
    lesson_ref; the catalog's own model is the diagnosis work's business)."""
    out = []
    for entry in entries:
        title, explanation, fix = (getattr(entry, k, None) for k in ("title", "explanation", "fix"))
        if not isinstance(title, Text) or not isinstance(explanation, Text):
            continue
        ref = getattr(entry, "lesson_ref", None) or ""
        lesson_id, _, step_id = ref.partition("/")
        # the run-independent summary reads as general advice; the explanation is a template
        # for one run, kept only for entries without a summary
        summary_text = getattr(entry, "summary", None)
        text = summary_text if isinstance(summary_text, Text) else _fill(explanation)
        if isinstance(fix, Text):
            text = text + Text(en="\n\n", zh="\n\n") + _fill(fix)
        match = getattr(entry, "match", None)
        pattern = getattr(match, "message", "") if match is not None else ""
        # the message regex is what learners paste: index its words, not its syntax
        words = re.sub(r"\(\?P<\w+>|\\.|[\[\](){}?*+|^$]", " ", str(pattern))
        out.append(
            Passage(
                id=f"catalog:{entry.id}",
                source="catalog",
                lesson_id=lesson_id or None,
                step_id=step_id or None,
                title=_fill(title),
                text=text,
                keywords=words[:400],
                pattern=str(pattern) or None,
            )
        )
    return out


def load_catalog_entries() -> list[Any]:
    """The diagnosis catalog's entries, or none while the catalog is not available."""
    try:
        from tutor.diagnosis import load_catalog  # type: ignore[attr-defined]
    except ImportError:
        return []
    try:
        catalog = load_catalog()
    except TutorError as exc:
        # the chat still answers from lessons and glossary; say why the catalog is missing
        logging.getLogger(__name__).warning("tutor chat: diagnosis catalog not used: %s", exc)
        return []
    entries = getattr(catalog, "entries", catalog)
    return list(entries.values() if isinstance(entries, dict) else entries)

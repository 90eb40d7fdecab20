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
from tutor.course.models import Course, Lesson, ReadingStep, Step
from tutor.errors import TutorError
from tutor.i18n import Text
from tutor.markdown_fences import fenced_pieces
from tutor.yaml_read import read_yaml

GLOSSARY_PATH = Path(__file__).with_name("glossary.yaml")
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
    code = next((p.code for p in fenced_pieces(markdown) if p.code is not None), None)
    return code.strip() if code is not None else None


def lesson_passages(lesson: Lesson) -> list[Passage]:
    out: list[Passage] = []
    keywords = f"{lesson.title.en} {lesson.title.zh}"

    def add(step: Step, text: Text, part: str = "", *, code: bool = False) -> None:
        passage = Passage(
            id=f"{lesson.id}/{step.id}{part}", source="lesson", lesson_id=lesson.id,
            step_id=step.id, title=step.title, text=text, keywords=keywords,
        )
        # a reading's first example is shown with it; a prompt's code is the exercise's
        example = {"code": first_code_block(text.en), "code_zh": first_code_block(text.zh)}
        out.append(passage.model_copy(update=example) if code else passage)

    for step in lesson.steps:
        if isinstance(step, ReadingStep):
            en_chunks, zh_chunks = (
                sections(step.body.en, MAX_CHUNK),
                sections(step.body.zh, MAX_CHUNK),
            )
            if len(en_chunks) != len(zh_chunks):  # translations split differently: keep whole
                en_chunks, zh_chunks = [step.body.en], [step.body.zh]
            for i, (en, zh) in enumerate(zip(en_chunks, zh_chunks, strict=True)):
                part = f"#{i + 1}" if len(en_chunks) > 1 else ""
                add(step, Text(en=en, zh=zh), part, code=True)
            continue
        prompt: Text | None = getattr(step, "prompt", None)
        if prompt is not None:
            add(step, prompt)
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


def _words(text: Text) -> Text:
    """``text`` for the index: placeholders with no neutral stand-in are left out."""

    def sub(match: re.Match[str]) -> str:
        return _GENERIC_NAMES.get(match.group(1), " ")

    return Text(en=_PLACEHOLDER_RE.sub(sub, text.en), zh=_PLACEHOLDER_RE.sub(sub, text.zh))


def _fill(text: Text) -> Text | None:
    """Catalog templates have ``{var}``-style placeholders; show them with neutral names.
    None when one has no neutral stand-in (``{line}``, ``{module}``): a "…" in its place
    reads as a broken sentence, not as advice."""
    if any(
        m.group(1) not in _GENERIC_NAMES
        for part in (text.en, text.zh)
        for m in _PLACEHOLDER_RE.finditer(part)
    ):
        return None

    def sub(match: re.Match[str]) -> str:
        return _GENERIC_NAMES[match.group(1)]

    return Text(en=_PLACEHOLDER_RE.sub(sub, text.en), zh=_PLACEHOLDER_RE.sub(sub, text.zh))


_FIRST_CLAUSE_RE = re.compile(r"(.+?)(?:[:：;；。]|\.\s)(.*)", re.DOTALL)


def _summary_split(summary: Text) -> tuple[Text, Text]:
    """(a title, the rest) from a catalog entry's summary, for an entry whose own title names
    one run: its first clause heads the passage, the rest follows without repeating it."""

    def parts(text: str) -> tuple[str, str]:
        match = _FIRST_CLAUSE_RE.match(text.strip())
        if match is None:
            return text.strip(), text.strip()
        head, rest = match.group(1).strip(), match.group(2).strip()
        if rest[:1].islower() and rest.split(" ", 1)[0].isalpha():
            rest = rest[0].upper() + rest[1:]  # "call model.eval() ..." starts a sentence
        return head, rest or text.strip()

    (en_head, en_rest), (zh_head, zh_rest) = parts(summary.en), parts(summary.zh)
    return Text(en=en_head, zh=zh_head), Text(en=en_rest, zh=zh_rest)


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
        summary = summary_text if isinstance(summary_text, Text) else None
        text = summary or _fill(explanation)
        own_title = _fill(title)
        shown_title = own_title
        if own_title is None and summary is not None:
            shown_title, text = _summary_split(summary)
        if text is None or shown_title is None:
            continue  # nothing of it reads as general advice
        match = getattr(entry, "match", None)
        pattern = getattr(match, "message", "") if match is not None else ""
        # the message regex is what learners paste: index its words, not its syntax
        words = re.sub(r"\(\?P<\w+>|\\.|[\[\](){}?*+|^$]", " ", str(pattern))[:400]
        if isinstance(fix, Text):
            # a summary split in two already ends with what to do: the fix would repeat it
            filled_fix = _fill(fix) if shown_title is own_title else None
            if filled_fix is not None:
                text = text + Text(en="\n\n", zh="\n\n") + filled_fix
            else:  # left out of the answer (it names one run): the index still reads it
                unshown = _words(fix)
                words = f"{words} {unshown.en} {unshown.zh}"
        out.append(
            Passage(
                id=f"catalog:{entry.id}",
                source="catalog",
                lesson_id=lesson_id or None,
                step_id=step_id or None,
                title=shown_title,
                indexed_title=None if own_title else _words(title),
                text=text,
                keywords=words,
                pattern=str(pattern) or None,
            )
        )
    return out


def load_catalog_entries() -> list[Any]:
    """The diagnosis catalog's entries, or none while the catalog is not available."""
    try:
        from tutor.diagnosis import load_catalog
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

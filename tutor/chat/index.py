"""What the tutor retrieves over, prepared once: passages, their tokens, one concept document
per lesson and each passage's topic; cached on disk.

Building it means parsing the glossary and the diagnosis catalog (pure-Python YAML: most of
the cost) and tokenising every passage. The result depends only on those sources, the course
and this package's code, so it is stored as JSON under the user cache dir, keyed by a hash of
all of them, and the next start only reads it back. A missing, stale or unreadable cache is
rebuilt; a cache that cannot be written is skipped: it only saves time.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from tutor.chat.bm25 import BM25
from tutor.chat.catalog_location import catalog_path
from tutor.chat.concepts import CONCEPTS_PATH, Concepts, lesson_document, load_concepts
from tutor.chat.cues import CUES_PATH, cue_tokens
from tutor.chat.models import Glossary, Passage
from tutor.chat.passages import (
    GLOSSARY_PATH,
    catalog_passages,
    course_passages,
    glossary_passages,
    load_catalog_entries,
    load_glossary,
)
from tutor.chat.tokens import tokenize
from tutor.course.models import Course, ReadingStep
from tutor.paths import cache_root
from tutor.records import to_json

CACHE_FORMAT = 1
KEEP_CACHES = 4
"""Cached indexes kept (the newest): one per course in use, a few at most."""
TITLE_REPEAT = 2
"""A passage's title is indexed this many times: the title says what the passage is about."""
CATALOG_REF_SHARE = 0.3
"""A catalog entry belongs to its ``lesson_ref`` lesson this much; the rest is shared among
the lessons its own text is about. (Its lesson_ref is where the diagnosis sends a learner,
often a neighbouring lesson; the entry's words say what it is about.)"""
CATALOG_TOPICS = 2
"""Lessons a catalog entry's own text is shared among."""
_WORD_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ENGINE_FILES = (
    "bm25.py",
    "concepts.py",
    "cues.py",
    "index.py",
    "markdown.py",
    "models.py",
    "passages.py",
    "tokens.py",
)
"""This package's modules whose code shapes the index: a change to them invalidates caches."""

log = logging.getLogger(__name__)


class IndexData(BaseModel):
    """Everything retrieval needs, as plain data (JSON round-trips it exactly)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    glossary: Glossary
    passages: list[Passage]
    passage_tokens: list[list[str]]
    readings: list[bool]
    """Per passage: part of a lesson's reading (not an exercise prompt)."""
    topics: list[dict[str, float]]
    """Per passage: lesson id -> how much the passage is about that lesson (sums to 1)."""
    lesson_ids: list[str]
    lesson_tokens: list[list[str]]
    priors: dict[str, float]
    homes: dict[str, list[str]] = {}
    """Lesson -> question kinds it is the home of (its prior does not apply to them)."""
    corpus_words: list[str]
    """Every English word of the passages: the typo layer leaves real words alone."""


def joinable_words(glossary: Glossary) -> frozenset[str]:
    """Underscore API names a learner may type apart ("no grad" for ``no_grad``)."""
    return frozenset(
        {t.lower().lstrip(".") for e in glossary.entries for t in e.terms if "_" in t}
        | {w for w in glossary.topic_words if "_" in w}
    )


def synonym_tokens(glossary: Glossary) -> dict[str, list[str]]:
    """Token -> the tokens it stands for, from the glossary's synonyms ("derivatives" ->
    "gradient", "导数" -> "梯度"), applied to lessons and questions alike so both sides
    say the same word."""
    out: dict[str, list[str]] = {}
    for word, replacement in glossary.synonyms.items():
        key = tokenize(word)
        if len(key) == 1 and (value := tokenize(replacement)) and value != key:
            out[key[0]] = value
    return out


def index_tokens(
    text: str, *, joinable: frozenset[str], synonyms: Mapping[str, list[str]]
) -> list[str]:
    """The tokens retrieval compares, for a document and a question alike: words, bigrams
    and API names with synonyms mapped, plus the concept cues the text expresses."""
    tokens = [out for tok in tokenize(text, joinable=joinable) for out in synonyms.get(tok, [tok])]
    return tokens + cue_tokens(text)


def passage_document(passage: Passage) -> str:
    shown = passage.indexed_title or passage.title
    title = f"{shown.en} {shown.zh} "
    return title * TITLE_REPEAT + f"{passage.text.en} {passage.text.zh} {passage.keywords}"


def build_index(
    passages: Sequence[Passage],
    glossary: Glossary,
    lesson_docs: Mapping[str, str] | None = None,
    priors: Mapping[str, float] | None = None,
    reading_steps: Iterable[str] | None = None,
    homes: Mapping[str, list[str]] | None = None,
) -> IndexData:
    """Tokenise ``passages`` and ``lesson_docs`` (lesson id -> concept document) and give
    every passage its topic. ``reading_steps``: 'LESSON/STEP' of reading steps (default:
    every lesson passage counts as reading)."""
    readings_refs = set(reading_steps) if reading_steps is not None else None
    joinable = joinable_words(glossary)
    synonyms = synonym_tokens(glossary)

    def tokens(text: str) -> list[str]:
        return index_tokens(text, joinable=joinable, synonyms=synonyms)

    passage_tokens = [tokens(passage_document(p)) for p in passages]
    lesson_docs = dict(lesson_docs or {})
    lesson_ids = list(lesson_docs)
    lesson_tokens = [tokens(lesson_docs[lid]) for lid in lesson_ids]
    lesson_index = BM25(lesson_tokens) if lesson_tokens else None
    topics = [
        _topic(p, tokens, lesson_index, lesson_ids)
        for p, tokens in zip(passages, passage_tokens, strict=True)
    ]
    words = {w.lower() for p in passages for w in _WORD_RE.findall(_raw(p))}
    return IndexData(
        glossary=glossary,
        passages=list(passages),
        passage_tokens=passage_tokens,
        readings=[
            p.source == "lesson"
            and (readings_refs is None or f"{p.lesson_id}/{p.step_id}" in readings_refs)
            for p in passages
        ],
        topics=topics,
        lesson_ids=lesson_ids,
        lesson_tokens=lesson_tokens,
        priors={lid: float((priors or {}).get(lid, 1.0)) for lid in lesson_ids},
        homes={lid: list(kinds) for lid, kinds in (homes or {}).items() if kinds},
        corpus_words=sorted(words),
    )


def _topic(
    passage: Passage, tokens: list[str], lesson_index: BM25 | None, lesson_ids: list[str]
) -> dict[str, float]:
    """Lesson and glossary passages belong to their lesson; a catalog entry mostly to the
    lessons its own words are about."""
    declared = passage.lesson_id
    if passage.source != "catalog" or lesson_index is None:
        return {declared: 1.0} if declared else {}
    scores = lesson_index.scores(tokens)
    best = sorted(scores, key=lambda i: -scores[i])[:CATALOG_TOPICS]
    total = sum(scores[i] for i in best)
    if total <= 0:
        return {declared: 1.0} if declared else {}
    ref_share = CATALOG_REF_SHARE if declared else 0.0
    out: dict[str, float] = {}
    for i in best:
        out[lesson_ids[i]] = (1 - ref_share) * scores[i] / total
    if declared:
        out[declared] = out.get(declared, 0.0) + ref_share
    return out


def _raw(passage: Passage) -> str:
    title = (passage.indexed_title or passage.title).en
    return " ".join([title, passage.text.en, passage.keywords, passage.code or ""])


def build_course_index(
    course: Course,
    glossary: Glossary,
    catalog_entries: Iterable[Any],
    concepts: Concepts,
) -> IndexData:
    passages = (
        course_passages(course) + glossary_passages(glossary) + catalog_passages(catalog_entries)
    )
    docs = {
        lesson.id: lesson_document(lesson, concepts.lessons.get(lesson.id))
        for lesson in course.lessons
    }
    priors = {lid: c.weight for lid, c in concepts.lessons.items()}
    readings = [
        f"{lesson.id}/{step.id}"
        for lesson in course.lessons
        for step in lesson.steps
        if isinstance(step, ReadingStep)
    ]
    homes = {lid: c.home_of for lid, c in concepts.lessons.items()}
    return build_index(passages, glossary, docs, priors, readings, homes)


# ---------------------------------------------------------------------------- disk cache


def default_cache_dir() -> Path:
    return cache_root() / "chat"


def cache_key(course: Course) -> str:
    """A hash of every source of the bundled index: the course, the data files, the code."""
    digest = hashlib.sha256(f"chat-index {CACHE_FORMAT}\n".encode())
    # the records' own JSON: dumping the course through pydantic first builds its schema,
    # which cost a shell question about 50 ms
    digest.update(to_json(course).encode("utf-8"))
    here = Path(__file__).parent
    catalog = catalog_path()
    files = [GLOSSARY_PATH, CONCEPTS_PATH, CUES_PATH, *(here / name for name in _ENGINE_FILES)]
    for path in [*files, *([catalog] if catalog else [])]:
        digest.update(path.name.encode())
        try:
            digest.update(path.read_bytes())
        except OSError:
            digest.update(b"<missing>")
    return digest.hexdigest()


def load_index(course: Course, cache_dir: Path | None) -> IndexData:
    """The index of ``course`` with the bundled glossary, concepts and diagnosis catalog:
    read from ``cache_dir`` when a cache of the same sources is there, else built (and
    stored there). ``cache_dir=None``: always build."""
    if cache_dir is None:
        return _build_default(course)
    key = cache_key(course)
    path = cache_dir / f"index-{key[:24]}.json"
    try:
        return IndexData.model_validate_json(path.read_bytes())
    except FileNotFoundError:
        pass
    except (OSError, ValidationError, ValueError) as exc:
        log.info("tutor chat: rebuilding the index cache %s: %s", path, exc)
    data = _build_default(course)
    _store(path, data)
    return data


def _build_default(course: Course) -> IndexData:
    return build_course_index(course, load_glossary(), load_catalog_entries(), load_concepts())


def _store(path: Path, data: IndexData) -> None:
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(data.model_dump_json(), encoding="utf-8")
        os.replace(tmp, path)  # atomic: a concurrent reader sees the old file or the new one
        # keep a few (several courses may be in use), not one per edit of the lessons
        olds = sorted(path.parent.glob("index-*.json"), key=lambda p: p.stat().st_mtime)
        for old in olds[:-KEEP_CACHES]:
            old.unlink(missing_ok=True)
    except OSError as exc:
        log.info("tutor chat: index cache not written to %s: %s", path, exc)
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)

"""Checks shared by the format tests of the frozen learner question sets (set 9 onwards).

A frozen set is described once by a :class:`FrozenSet` (its folder, SHA-256 pin, the counts it
promises and the earlier material it must not share a source with), a row of
``test_frozen_question_sets.py``, which calls the methods here for every row. The item model,
the language pattern and the snippet runner are set 2's (``test_learner2_format.py``), so all
sets share one definition of the format.
Nothing here calls the chat, so these checks cannot leak a split into it.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property
from itertools import pairwise
from pathlib import Path
from typing import get_args

import yaml
from fresh_process import run_fresh
from test_learner2_format import (
    _RUN_SNIPPETS,
    CJK,
    NON_LESSON_TOPICS,
    Kind,
    LearnerQuestion,
    course,
    prints_as_expected,
)

from tutor.course import AnswerStep, CodeStep, FixStep

HERE = Path(__file__).parent
ROOT = HERE.parents[1]
URL = re.compile(r"https?://[^\s'\"#<>)\]`,]+")
STEP = re.compile(r"^\s*step:\s*([a-z0-9-]+/[a-z0-9-]+)\s*$", re.MULTILINE)


def same_thread(url: str) -> str:
    """One spelling per thread: scheme, www, case, fragment, query, trailing slash and the
    /issues/ versus /pull/ path do not make another thread."""
    url = re.sub(r"^https?://(www\.)?", "", url.strip().lower()).split("#")[0].split("?")[0]
    url = url.rstrip("/.;:")
    return re.sub(r"/(issues|pull|discussions)/(\d+).*$", r"/thread/\2", url)


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file())


@dataclass(frozen=True)
class FrozenSet:
    """One frozen split and what its README promises.

    ``folder`` is the set's folder under ``tests/chat/``; ``not_earlier`` names the folders there
    that are not earlier material (the sets built after it); ``judged_days`` are the
    ``benchmarks/judged/`` records that existed when the set was built; ``at_least`` holds the least
    count per kind, plus ``"real zh"`` for the real Chinese posts; ``least_threads`` is a floor on
    the earlier threads found, to show the earlier material was read; ``reused_steps`` is how many
    exercise steps already named by an earlier set its solution requests may name (0 for the sets
    built while enough steps were free; set 11 found one free step left).
    """

    folder: str
    sha256: str
    per_language: int
    at_least: dict[str, int]
    lessons_asked: int
    judged_days: tuple[str, ...]
    least_threads: int
    not_earlier: tuple[str, ...] = field(default=())
    reused_steps: int = 0
    beside: tuple[str, ...] = field(default=())
    """The diagnosis corpora (``tests/diagnosis/``) built side by side with it for the same
    measure: not earlier material (neither builder saw the other's sources)."""

    @property
    def path(self) -> Path:
        return HERE / self.folder / "test.yaml"

    @cached_property
    def questions(self) -> tuple[LearnerQuestion, ...]:
        """The set's items, each checked by set 2's model (the single source of the format)."""
        raw = yaml.safe_load(self.path.read_text("utf-8"))
        return tuple(map(LearnerQuestion.model_validate, raw))

    @cached_property
    def earlier_sets(self) -> list[Path]:
        """Every question set under ``tests/chat/`` built before this one, whatever its format."""
        skip = {self.folder, *self.not_earlier}
        return sorted(p for p in HERE.rglob("*.yaml") if p.relative_to(HERE).parts[0] not in skip)

    @cached_property
    def earlier(self) -> list[Path]:
        """The earlier sets, the diagnosis corpora, the chat's cards and the judged records that
        existed when the set was built: only their URLs are read from the raw text."""
        judged = ROOT / "benchmarks" / "judged"
        return [
            *self.earlier_sets,
            *(p for p in _files(ROOT / "tests" / "diagnosis")
              if p.relative_to(ROOT / "tests" / "diagnosis").parts[0] not in self.beside),
            *_files(ROOT / "tutor" / "chat" / "cards"),
            *(p for day in self.judged_days for p in _files(judged / day)),
        ]

    def check_frozen(self) -> None:
        assert hashlib.sha256(self.path.read_bytes()).hexdigest() == self.sha256

    def check_counts(self) -> None:
        items = self.questions
        langs = Counter(q.lang for q in items)
        assert langs == {"en": self.per_language, "zh": self.per_language}
        found = Counter[str](q.kind for q in items)
        assert set(get_args(Kind)) - set(found) == set()  # every kind of question is asked
        found["real zh"] = sum(q.lang == "zh" and q.origin == "real" for q in items)
        short = {name: found[name] for name, least in self.at_least.items() if found[name] < least}
        assert short == {}

    def check_ids_and_sources(self) -> None:
        for q in self.questions:
            digest = hashlib.sha256(q.source.encode()).hexdigest()[:8]
            assert q.id == f"{q.lang}-{digest}"
        pairs = Counter((q.lang, same_thread(q.source)) for q in self.questions)
        assert sorted(pair for pair, n in pairs.items() if n > 1) == []

    def check_translations_follow_originals(self) -> None:
        items = self.questions
        misplaced = [
            q.id
            for before, q in pairwise(items)
            if q.origin == "translated"
            and (before.lang, before.source, before.kind) != ("en", q.source, q.kind)
        ]
        assert items[0].origin != "translated"
        assert misplaced == []

    def check_text_language(self) -> None:
        for q in self.questions:
            chinese = q.lang == "zh"
            assert bool(CJK.search(q.q)) == chinese, q.id
            assert bool(CJK.search(q.answer_note)) == chinese, q.id

    def check_lessons_asked(self) -> None:
        lessons = {lesson.id for lesson in course().lessons}
        topics = {q.topic for q in self.questions if q.topic is not None}
        assert topics - lessons - NON_LESSON_TOPICS == set()
        assert len(topics & lessons) >= self.lessons_asked

    def check_solution_steps_are_new(self) -> None:
        kinds: dict[str, type] = {}
        for q in self.questions:
            if q.step is not None:
                lesson_id, step_id = q.step.split("/")
                kinds[q.id] = type(course().lesson(lesson_id).step(step_id))
        assert set(kinds.values()) <= {CodeStep, FixStep, AnswerStep}
        assert len(kinds) == sum(q.kind == "solution" for q in self.questions)
        named = {step for p in self.earlier_sets for step in STEP.findall(p.read_text("utf-8"))}
        assert len(named) > 20  # the earlier sets were read
        steps = [q.step for q in self.questions if q.step is not None]
        assert len(set(steps)) == len(steps)  # one solution request per exercise step
        reused = sorted(set(steps) & named)
        assert len(reused) <= self.reused_steps, reused

    def check_no_source_reused(self) -> None:
        earlier = {
            same_thread(url)
            for path in self.earlier
            for url in URL.findall(path.read_text("utf-8", errors="replace"))
        }
        assert len(earlier) > self.least_threads  # the earlier material was read
        reused = sorted(q.source for q in self.questions if same_thread(q.source) in earlier)
        assert reused == []

    def check_value_snippets(self) -> None:
        values = [q for q in self.questions if q.snippet is not None]
        for q in values:
            missing = [line for line in (q.snippet or "").splitlines() if line not in q.q]
            assert missing == [], q.id
        (line,) = run_fresh(_RUN_SNIPPETS, json.dumps([q.snippet for q in values]))
        printed = dict(zip((q.id for q in values), json.loads(line), strict=True))
        wrong = {
            q.id: out for q in values if not prints_as_expected(out := printed[q.id], q.expected)
        }
        assert wrong == {}

"""The frozen learner question set 3 (``tests/chat/learner3/test.yaml``) is well formed.

The item model, the language pattern and the snippet runner are set 2's
(``test_learner2_format.py``), so both sets share one definition of the format. These tests check
the data only: the counts the set promises, that it shares no source with any earlier question set,
that translations sit right after their originals, that every lesson of the course is asked about,
that solution requests name exercise steps, and that each value item's snippet prints its
``expected`` output on the installed torch. They never call the chat, so they cannot leak the split
into it.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from functools import cache
from itertools import pairwise
from pathlib import Path

import yaml
from fresh_process import run_fresh
from test_learner2_format import (
    _RUN_SNIPPETS,
    CJK,
    NON_LESSON_TOPICS,
    LearnerQuestion,
    course,
    prints_as_expected,
)

from tutor.course import AnswerStep, CodeStep, FixStep

HERE = Path(__file__).parent
SET = HERE / "learner3" / "test.yaml"
# Every earlier question set, whatever its format: their URLs are read from the raw text.
EARLIER_SETS = [
    *sorted((HERE / "learner").glob("*.yaml")),
    HERE / "learner2" / "test.yaml",
    *sorted(HERE.glob("heldout*.yaml")),
    HERE / "questions.yaml",
]
URL = re.compile(r"https?://[^\s'\"#]+")
# The split is frozen (committed once as "frozen test split"); an edit must show, not slip in.
FROZEN_SHA256 = "5391f8ddad02bc33086cc401ee1eeb80b049dee96918e2c2d3a993a95c31f432"
# What the set promises (README.md): per language, and the least per kind or origin.
PER_LANGUAGE = 50
AT_LEAST = {"value": 10, "solution": 12, "off_topic": 12, "real zh": 20}


@cache
def questions() -> tuple[LearnerQuestion, ...]:
    """The set's items, each checked by set 2's model (the single source of the format)."""
    return tuple(map(LearnerQuestion.model_validate, yaml.safe_load(SET.read_text("utf-8"))))


def test_the_split_is_unchanged_since_it_was_frozen() -> None:
    assert hashlib.sha256(SET.read_bytes()).hexdigest() == FROZEN_SHA256


def test_counts_by_language_kind_and_origin() -> None:
    langs = Counter(q.lang for q in questions())
    assert langs == {"en": PER_LANGUAGE, "zh": PER_LANGUAGE}
    found = Counter(q.kind for q in questions())
    found["real zh"] = sum(q.lang == "zh" and q.origin == "real" for q in questions())
    assert {name: found[name] for name in AT_LEAST if found[name] < AT_LEAST[name]} == {}


def test_ids_follow_the_source_and_sources_are_used_once_per_language() -> None:
    for q in questions():
        digest = hashlib.sha256(q.source.encode()).hexdigest()[:8]
        assert q.id == f"{q.lang}-{digest}"
    pairs = Counter((q.lang, q.source) for q in questions())
    assert sorted(pair for pair, n in pairs.items() if n > 1) == []


def test_a_translation_sits_right_after_its_english_original() -> None:
    items = questions()
    misplaced = [
        q.id
        for before, q in pairwise(items)
        if q.origin == "translated"
        and (before.lang, before.source, before.kind) != ("en", q.source, q.kind)
    ]
    assert items[0].origin != "translated"
    assert misplaced == []


def test_text_is_in_the_items_language() -> None:
    for q in questions():
        chinese = q.lang == "zh"
        assert bool(CJK.search(q.q)) == chinese, q.id
        assert bool(CJK.search(q.answer_note)) == chinese, q.id


def test_every_lesson_of_the_course_is_asked_about() -> None:
    lessons = {lesson.id for lesson in course().lessons}
    topics = {q.topic for q in questions() if q.topic is not None}
    assert topics - lessons - NON_LESSON_TOPICS == set()
    assert lessons - topics == set()


def test_solution_requests_name_an_exercise_of_the_course() -> None:
    kinds: dict[str, type] = {}
    for q in questions():
        if q.step is not None:
            lesson_id, step_id = q.step.split("/")
            kinds[q.id] = type(course().lesson(lesson_id).step(step_id))
    assert set(kinds.values()) <= {CodeStep, FixStep, AnswerStep}
    assert len(kinds) == sum(q.kind == "solution" for q in questions())


def test_no_source_of_an_earlier_set_is_reused() -> None:
    earlier = {url for path in EARLIER_SETS for url in URL.findall(path.read_text("utf-8"))}
    assert len(earlier) > 100  # the sets were read: set 2 alone cites over a hundred sources
    assert sorted({q.source for q in questions()} & earlier) == []


def test_value_snippets_are_pasted_code_that_prints_what_expected_says() -> None:
    values = [q for q in questions() if q.snippet is not None]
    for q in values:
        assert [line for line in (q.snippet or "").splitlines() if line not in q.q] == [], q.id
    (line,) = run_fresh(_RUN_SNIPPETS, json.dumps([q.snippet for q in values]))
    printed = dict(zip((q.id for q in values), json.loads(line), strict=True))
    wrong = {q.id: out for q in values if not prints_as_expected(out := printed[q.id], q.expected)}
    assert wrong == {}

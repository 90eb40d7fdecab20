"""The frozen learner question set 7 (``tests/chat/learner7/test.yaml``) is well formed.

The item model, the language pattern and the snippet runner are set 2's
(``test_learner2_format.py``), so all sets share one definition of the format. These tests check
the data only: the counts the set promises, that it shares no source with any earlier question set
(sets 1 to 6 included), with the diagnosis corpora (corpus6 included) or with the judged records
that existed when it was built, that translations sit right after their originals, that most
lessons of the course are asked about, that solution requests name exercise steps no earlier set
named, and that each value item's snippet prints its ``expected`` output on the installed torch.
They never call the chat, so they cannot leak the split into it.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from functools import cache
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
    built_before,
    course,
    prints_as_expected,
)

from tutor.course import AnswerStep, CodeStep, FixStep

HERE = Path(__file__).parent
ROOT = HERE.parents[1]
SET = HERE / "learner7" / "test.yaml"
# The judged records that existed when this set was built (later ones may score this set).
JUDGED_DAYS = ("2026-12-03", "2026-12-04", "2026-12-05-chat3", "2026-12-06", "2026-12-06-chatfacts")
# Every earlier question set, whatever its format, the diagnosis corpora and those judged
# records: their URLs are read from the raw text.
EARLIER_SETS = sorted(p for p in HERE.rglob("*.yaml")
                      if built_before(p.relative_to(HERE).parts[0], 7))
EARLIER = [
    *EARLIER_SETS,
    *sorted(p for p in (ROOT / "tests" / "diagnosis").rglob("*") if p.is_file()),
    *sorted(
        p
        for day in JUDGED_DAYS
        for p in (ROOT / "benchmarks" / "judged" / day).rglob("*")
        if p.is_file()
    ),
]
URL = re.compile(r"https?://[^\s'\"#<>)\]`,]+")
STEP = re.compile(r"^\s*step:\s*([a-z0-9-]+/[a-z0-9-]+)\s*$", re.MULTILINE)
# The split is frozen (committed once as "frozen test split"); an edit must show, not slip in.
FROZEN_SHA256 = "9c3e513a052ff96f048c21579aa2c2908ab591bfe1ee8df46d1730637f8774b6"
# What the set promises (README.md): per language, and the least per kind or origin.
PER_LANGUAGE = 32
AT_LEAST = {"value": 4, "solution": 6, "off_topic": 6, "real zh": 7}
# A smaller set than set 5: at least this many of the course's lessons are asked about.
LESSONS_ASKED = 18


def same_thread(url: str) -> str:
    """One spelling per thread: scheme, www, case, fragment, query, trailing slash and the
    /issues/ versus /pull/ path do not make another thread."""
    url = re.sub(r"^https?://(www\.)?", "", url.strip().lower()).split("#")[0].split("?")[0]
    url = url.rstrip("/.;:")
    return re.sub(r"/(issues|pull|discussions)/(\d+).*$", r"/thread/\2", url)


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
    assert set(get_args(Kind)) - set(found) == set()  # every kind of question is asked
    found["real zh"] = sum(q.lang == "zh" and q.origin == "real" for q in questions())
    assert {name: found[name] for name in AT_LEAST if found[name] < AT_LEAST[name]} == {}


def test_ids_follow_the_source_and_sources_are_used_once_per_language() -> None:
    for q in questions():
        digest = hashlib.sha256(q.source.encode()).hexdigest()[:8]
        assert q.id == f"{q.lang}-{digest}"
    pairs = Counter((q.lang, same_thread(q.source)) for q in questions())
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


def test_most_lessons_of_the_course_are_asked_about() -> None:
    lessons = {lesson.id for lesson in course().lessons}
    topics = {q.topic for q in questions() if q.topic is not None}
    assert topics - lessons - NON_LESSON_TOPICS == set()
    assert len(topics & lessons) >= LESSONS_ASKED


def test_solution_requests_name_an_exercise_no_earlier_set_named() -> None:
    kinds: dict[str, type] = {}
    for q in questions():
        if q.step is not None:
            lesson_id, step_id = q.step.split("/")
            kinds[q.id] = type(course().lesson(lesson_id).step(step_id))
    assert set(kinds.values()) <= {CodeStep, FixStep, AnswerStep}
    assert len(kinds) == sum(q.kind == "solution" for q in questions())
    named = {step for path in EARLIER_SETS for step in STEP.findall(path.read_text("utf-8"))}
    assert len(named) > 20  # the earlier sets were read
    assert sorted({q.step for q in questions() if q.step is not None} & named) == []


def test_no_source_of_an_earlier_set_is_reused() -> None:
    earlier = {
        same_thread(url)
        for path in EARLIER
        for url in URL.findall(path.read_text("utf-8", errors="replace"))
    }
    assert len(earlier) > 800  # the sets, corpora and records were read: about 850 threads
    assert sorted(q.source for q in questions() if same_thread(q.source) in earlier) == []


def test_value_snippets_are_pasted_code_that_prints_what_expected_says() -> None:
    values = [q for q in questions() if q.snippet is not None]
    for q in values:
        assert [line for line in (q.snippet or "").splitlines() if line not in q.q] == [], q.id
    (line,) = run_fresh(_RUN_SNIPPETS, json.dumps([q.snippet for q in values]))
    printed = dict(zip((q.id for q in values), json.loads(line), strict=True))
    wrong = {q.id: out for q in values if not prints_as_expected(out := printed[q.id], q.expected)}
    assert wrong == {}

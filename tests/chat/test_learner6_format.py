"""The learner question set 6 (``tests/chat/learner6/dev.yaml``) is well formed.

Set 6 is a DEV set: the chat is tuned on it, so its figures are dev figures. The item model, the
language pattern and the snippet runner are set 2's (``test_learner2_format.py``). These tests
check the data: the counts, that ids follow the sources, that translations sit right after their
originals, that the text is in the item's language, that solution requests name exercise steps,
that no source of an earlier training set is reused, and that each value snippet prints its
``expected`` output on the installed torch.
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
SET = HERE / "learner6" / "dev.yaml"
# The earlier sets this one must not repeat (their URLs are read from the raw text). The frozen
# test splits that are still unscored are not read here.
EARLIER_SETS = [
    *sorted((HERE / "learner").glob("*.yaml")),
    HERE / "learner2" / "test.yaml",
    HERE / "learner3" / "test.yaml",
    HERE / "learner4" / "test.yaml",
    *sorted(HERE.glob("heldout*.yaml")),
    HERE / "questions.yaml",
]
URL = re.compile(r"https?://[^\s'\"#]+")
PER_LANGUAGE = 35
AT_LEAST = {"value": 10, "solution": 4, "off_topic": 6, "can": 8, "compare": 6, "real zh": 12}


@cache
def questions() -> tuple[LearnerQuestion, ...]:
    return tuple(map(LearnerQuestion.model_validate, yaml.safe_load(SET.read_text("utf-8"))))


def test_counts_by_language_kind_and_origin() -> None:
    assert Counter(q.lang for q in questions()) == {"en": PER_LANGUAGE, "zh": PER_LANGUAGE}
    found = Counter(q.kind for q in questions())
    found["real zh"] = sum(q.lang == "zh" and q.origin == "real" for q in questions())
    assert {name: found[name] for name in AT_LEAST if found[name] < AT_LEAST[name]} == {}


def test_ids_follow_the_source_and_sources_are_used_once_per_language() -> None:
    for q in questions():
        assert q.id == f"{q.lang}-{hashlib.sha256(q.source.encode()).hexdigest()[:8]}"
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


def test_topics_are_lessons_and_solution_requests_name_exercises() -> None:
    lessons = {lesson.id for lesson in course().lessons}
    assert {q.topic for q in questions() if q.topic} - lessons - NON_LESSON_TOPICS == set()
    kinds = set()
    for q in questions():
        if q.step is not None:
            lesson_id, step_id = q.step.split("/")
            kinds.add(type(course().lesson(lesson_id).step(step_id)))
    assert kinds <= {CodeStep, FixStep, AnswerStep}


def test_no_source_of_an_earlier_set_is_reused() -> None:
    earlier = {url for path in EARLIER_SETS for url in URL.findall(path.read_text("utf-8"))}
    assert len(earlier) > 300
    mine = {match for q in questions() for match in URL.findall(q.source)}
    assert sorted(mine & earlier) == []


def test_value_snippets_are_pasted_code_that_prints_what_expected_says() -> None:
    values = [q for q in questions() if q.snippet is not None]
    for q in values:
        assert [line for line in (q.snippet or "").splitlines() if line not in q.q] == [], q.id
    (line,) = run_fresh(_RUN_SNIPPETS, json.dumps([q.snippet for q in values]))
    printed = dict(zip((q.id for q in values), json.loads(line), strict=True))
    wrong = {q.id: out for q in values if not prints_as_expected(out := printed[q.id], q.expected)}
    assert wrong == {}

"""The frozen learner question set 2 (``tests/chat/learner2/test.yaml``) is well formed.

These tests check the data only: the fields, the course steps that solution requests name, the
counts the set promises, and that each value item's snippet prints its ``expected`` output on the
installed torch. They never call the chat, so they cannot leak the split into it.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Literal

import pytest
import yaml
from fresh_process import run_fresh
from pydantic import BaseModel, ConfigDict, Field, model_validator

from tutor.course import AnswerStep, CodeStep, Course, FixStep, load_course

HERE = Path(__file__).parent
SET = HERE / "learner2" / "test.yaml"
FIRST_SET = sorted((HERE / "learner").glob("*.yaml"))
NON_LESSON_TOPICS = {"training", "other-autograd"}
# The split is frozen (committed once as "frozen test split"); an edit must show, not slip in.
FROZEN_SHA256 = "f083ad8920711aba290599f928394b565331e259b21adff3a2e2c2a90b6cf8bd"
CJK = re.compile(r"[\u4e00-\u9fff]")

Kind = Literal[
    "what", "why", "how", "compare", "can", "safe", "value", "fails", "solution", "off_topic"
]
MINIMUM_KINDS: dict[Kind, int] = {
    "solution": 15,
    "off_topic": 15,
    "compare": 10,
    "can": 8,
    "safe": 6,
    "value": 6,
}


class LearnerQuestion(BaseModel):
    """One question of the set; the file's header comment says what each field means."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^(en|zh)-[0-9a-f]{8}$")
    lang: Literal["en", "zh"]
    kind: Kind
    q: str = Field(min_length=1)
    topic: str | None = None
    step: str | None = Field(default=None, pattern=r"^[a-z0-9-]+/[a-z0-9-]+$")
    must: list[str] = []
    answer_note: str = Field(min_length=1)
    snippet: str | None = None
    expected: str | None = None
    source: str = Field(pattern=r"^https?://\S+$")
    origin: Literal["real", "translated", "adapted", "adapted-real-zh"]

    @model_validator(mode="after")
    def _consistent(self) -> LearnerQuestion:
        if not self.id.startswith(self.lang + "-"):
            raise ValueError(f"id {self.id} does not start with its lang {self.lang}")
        on_topic = self.kind != "off_topic"
        if on_topic != (self.topic is not None) or on_topic != bool(self.must):
            raise ValueError("topic and must are required on-topic and absent off-topic")
        for term in self.must:
            if any(not alt or alt != alt.strip() for alt in term.split("|")):
                raise ValueError(f"empty or padded alternative in must term {term!r}")
        solution = self.kind == "solution"
        if solution != (self.step is not None):
            raise ValueError("a step is named by solution requests and only by them")
        if solution != self.origin.startswith("adapted"):
            raise ValueError("solution requests, and only they, are adapted to a course step")
        if self.step is not None and self.step.split("/")[0] != self.topic:
            raise ValueError(f"step {self.step} is not in topic {self.topic}")
        if (self.kind == "value") != (self.snippet is not None and self.expected is not None):
            raise ValueError("value items, and only they, carry a snippet and its expected output")
        return self


def built_before(folder: str, number: int) -> bool:
    """A folder of tests/chat a question set numbered ``number`` may count as earlier: a
    question set built before it (a later one, learner27 say, may name its steps again:
    every step is named by now), or the chat's other material."""
    found = re.fullmatch(r"learner(\d+)", folder)
    return found is None or int(found.group(1)) < number


@cache
def questions() -> tuple[LearnerQuestion, ...]:
    raw = yaml.safe_load(SET.read_text(encoding="utf-8"))
    return tuple(LearnerQuestion.model_validate(item) for item in raw)


@cache
def course() -> Course:
    return load_course()


def test_the_split_is_unchanged_since_it_was_frozen() -> None:
    assert hashlib.sha256(SET.read_bytes()).hexdigest() == FROZEN_SHA256


def test_every_item_has_the_fields_of_its_kind() -> None:
    assert len(questions()) >= 130


def test_ids_are_unique_and_a_source_is_used_once_per_language() -> None:
    ids = Counter(q.id for q in questions())
    assert [i for i, n in ids.items() if n > 1] == []
    pairs = Counter((q.lang, q.source) for q in questions())
    assert [p for p, n in pairs.items() if n > 1] == []


def test_text_is_in_the_items_language() -> None:
    wrong = [
        q.id
        for q in questions()
        if (q.lang == "zh") != bool(CJK.search(q.q))
        or (q.lang == "zh") != bool(CJK.search(q.answer_note))
    ]
    assert wrong == []


def test_counts_by_language_and_kind() -> None:
    langs = Counter(q.lang for q in questions())
    assert langs["en"] == langs["zh"]
    kinds = Counter(q.kind for q in questions())
    short = {kind: kinds[kind] for kind, least in MINIMUM_KINDS.items() if kinds[kind] < least}
    assert short == {}


def test_topics_are_lessons_of_the_course() -> None:
    lessons = {lesson.id for lesson in course().lessons}
    unknown = {q.topic for q in questions() if q.topic is not None} - lessons - NON_LESSON_TOPICS
    assert unknown == set()


def test_solution_requests_name_an_exercise_of_the_course() -> None:
    for q in questions():
        if q.step is None:
            continue
        lesson_id, step_id = q.step.split("/")
        step = course().lesson(lesson_id).step(step_id)
        assert isinstance(step, CodeStep | FixStep | AnswerStep), (
            f"{q.id}: {q.step} is a {step.kind} step"
        )


def test_no_source_of_the_first_set_is_reused() -> None:
    first: set[str] = set()
    for path in FIRST_SET:
        first.update(
            item["source"].split("#")[0]
            for item in yaml.safe_load(path.read_text(encoding="utf-8"))
        )
    assert {q.source for q in questions()} & first == set()


def test_value_snippets_are_the_pasted_code() -> None:
    for q in questions():
        if q.snippet is not None:
            missing = [line for line in q.snippet.splitlines() if line.strip() and line not in q.q]
            assert missing == [], q.id


_RUN_SNIPPETS = """
import contextlib, io, json, sys
printed = []
for code in json.loads(sys.argv[1]):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "<snippet>", "exec"), {"__name__": "__snippet__"})
    printed.append(out.getvalue())
print(json.dumps(printed))
"""


_NUMBER = re.compile(r"-?\d+\.\d*(?:e[+-]?\d+)?")


def prints_as_expected(printed: str, expected: str | None) -> bool:
    """``printed`` is ``expected`` up to the last digit of a float: torch's kernels round the
    last printed digit differently on other CPUs (169.8731 on one, 169.8732 on another)."""
    got, want = printed.strip(), (expected or "").strip()
    if _NUMBER.split(got) != _NUMBER.split(want):
        return False
    pairs = zip(_NUMBER.findall(got), _NUMBER.findall(want), strict=True)
    return all(math.isclose(float(a), float(b), rel_tol=1e-4, abs_tol=1e-4) for a, b in pairs)


def test_value_snippets_print_what_expected_says() -> None:
    values = [q for q in questions() if q.snippet is not None]
    (line,) = run_fresh(_RUN_SNIPPETS, json.dumps([q.snippet for q in values]))
    printed = json.loads(line)
    wrong = {
        q.id: out
        for q, out in zip(values, printed, strict=True)
        if not prints_as_expected(out, q.expected)
    }
    assert wrong == {}


@pytest.mark.parametrize(
    "bad",
    [
        {"kind": "off_topic"},
        {"must": ["retain_graph|"]},
        {"step": "matrix-mm/twice"},
        {"origin": "adapted"},
        {"snippet": "print(1)", "expected": "1"},
        {"id": "zh-00000000"},
    ],
)
def test_the_model_rejects_an_inconsistent_item(bad: dict[str, object]) -> None:
    good = {
        "id": "en-00000000",
        "lang": "en",
        "kind": "why",
        "q": "Why?",
        "topic": "matrix-mm",
        "must": ["retain_graph"],
        "answer_note": "Because.",
        "source": "https://example.org/q/1",
        "origin": "real",
    }
    LearnerQuestion.model_validate(good)
    with pytest.raises(ValueError):
        LearnerQuestion.model_validate(good | bad)

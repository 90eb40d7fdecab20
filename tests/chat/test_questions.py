"""The tutor on the question set (tests/chat/questions.yaml) over the bundled course.

Floors, not per-question expectations: the set measures concepts, nobody tunes to it.
`benchmarks/bench_chat.py` prints the figures and the misses.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from chat_evaluation import (
    OFF_TOPIC,
    SOLUTION_REQUEST,
    QuestionCase,
    Report,
    evaluate,
    load_cases,
)

from tutor.chat import Tutor
from tutor.chat.tokens import has_cjk
from tutor.course import load_course

HERE = Path(__file__).parent


@pytest.fixture(scope="module")
def cases() -> list[QuestionCase]:
    return load_cases(HERE / "questions.yaml")


@pytest.fixture(scope="module")
def report(cases: list[QuestionCase]) -> Report:
    return evaluate(Tutor(load_course()), cases)


def test_the_set_is_realistic_and_balanced(cases: list[QuestionCase]) -> None:
    assert len(cases) >= 60
    zh = sum(has_cjk(c.q) for c in cases)
    assert abs(zh - (len(cases) - zh)) <= 2, "half Chinese, half English"
    topics = {c.topic for c in cases}
    assert {OFF_TOPIC, SOLUTION_REQUEST} <= topics and len(topics) >= 14
    assert all(c.expect for c in cases if c.topic not in (OFF_TOPIC, SOLUTION_REQUEST))


def test_retrieval_finds_the_right_lesson(report: Report) -> None:
    assert report.top1 >= 0.85, [r.case.q for r in report.failures()]
    assert report.top3 >= 0.95


def test_answers_contain_the_expected_words(report: Report) -> None:
    assert report.words >= 0.85


def test_every_solution_request_is_refused_with_a_hint(report: Report) -> None:
    refused, total = report.refused_with_hint
    assert total >= 6 and refused == total
    assert report.leaks == 0


def test_off_topic_questions_are_all_declined_and_only_they(report: Report) -> None:
    off = report.subset(OFF_TOPIC)
    assert off and all(r.answer.kind == "off_topic" for r in off)
    on = [r for r in report.results if r.case.topic not in (OFF_TOPIC, SOLUTION_REQUEST)]
    assert not [r.case.q for r in on if r.answer.kind == "off_topic"]


def test_answers_are_in_the_language_of_the_question(report: Report) -> None:
    for r in report.results:
        if r.answer.kind in ("answer", "hint", "off_topic"):
            # lesson titles may quote the other language ("Errors (报错)"): count, don't test
            cjk = sum(has_cjk(ch) for ch in r.answer.text) / len(r.answer.text)
            assert (cjk > 0.1) == has_cjk(r.case.q), r.case.q


def test_held_out_questions_clear_a_lower_floor() -> None:
    """Written after the engine and never tuned to; the floor leaves room for honest misses."""
    report = evaluate(Tutor(load_course()), load_cases(HERE / "heldout.yaml"))
    assert len(report.results) == 20
    assert report.top1 >= 0.7 and report.top3 >= 0.85
    refused, total = report.refused_with_hint
    assert refused == total and report.leaks == 0
    assert all(r.top1 for r in report.subset(OFF_TOPIC))


def _clears_its_floor(name: str, *, size: int, top1: float, top3: float, requests: int) -> None:
    """A held-out set a later round read: its size (half of it in Chinese), a top-1/top-3
    floor, every solution request refused with a hint, no leak, every off-topic question
    declined."""
    cases = load_cases(HERE / name)
    assert len(cases) == size and sum(has_cjk(c.q) for c in cases) == size // 2
    report = evaluate(Tutor(load_course()), cases)
    assert report.top1 >= top1 and report.top3 >= top3
    refused, total = report.refused_with_hint
    assert total == requests and refused == total and report.leaks == 0
    assert all(r.top1 for r in report.subset(OFF_TOPIC))


def test_second_held_out_set_clears_a_floor_set_before_it_was_measured() -> None:
    """Written before round 2 changed the engine; measured once at its end (73.3% top-1, 0/4
    solution requests refused: this test was an xfail). Round 3 read its misses, so it is no
    longer held out; the floor is still the one fixed before round 2 measured it."""
    _clears_its_floor("heldout2.yaml", size=30, top1=0.8, top3=0.9, requests=4)


def test_third_held_out_set_keeps_what_round_four_fixed() -> None:
    """Written by someone who never read the chat code; measured once at the end of round 3
    (65% top-1, 5/6 solution requests refused, 1/4 off-topic declined). Round 4 read its
    misses and fixed them by concept (95% top-1, 6/6, 4/4): no longer held out, so this is a
    regression floor with room for honest misses, not a measure of generalisation."""
    _clears_its_floor("heldout3.yaml", size=40, top1=0.85, top3=0.9, requests=6)


def test_fourth_held_out_set_keeps_what_round_five_fixed() -> None:
    """Written by someone who never read the chat code; measured once at the end of round 4
    (75% top-1, 4/6 off-topic declined). Round 5 read its misses and changed the scoring
    model (pasted errors routed by the catalog's messages, writing/homework tasks declined):
    85% top-1, 6/6. A regression floor, not a measure of generalisation."""
    _clears_its_floor("heldout4.yaml", size=40, top1=0.8, top3=0.9, requests=6)


def test_fifth_held_out_set_keeps_what_round_six_fixed() -> None:
    """Written by someone who never read the chat code; measured once at the end of round 5
    (85% top-1, 3/6 solution requests refused, 5/6 off-topic declined). Round 6 read its
    misses and changed the model (symptoms answered by their causes, a solution request's
    trouble cue vetoing only its own clause): 92.5% top-1, 6/6. A regression floor."""
    _clears_its_floor("heldout5.yaml", size=40, top1=0.85, top3=0.9, requests=6)


def test_sixth_held_out_set_keeps_what_round_seven_fixed() -> None:
    """Written by someone who never read the chat code; measured once at the end of round 6
    (82% top-1, 8/10 solution requests refused, 5/6 off-topic declined, 0 leaks). Round 7
    read its misses and changed the model (a version already fixed or the tutor's own is the
    answer, an explanation turned down vetoes nothing, a plain Python error is declined, a
    non-leaf's .grad names both lessons, growing values read as numbers, a lesson named as
    the one the learner is on): 96% top-1, 10/10, 6/6. A regression floor."""
    _clears_its_floor("heldout6.yaml", size=50, top1=0.9, top3=0.95, requests=10)


def test_seventh_held_out_set_never_leaks_a_solution() -> None:
    """Written by someone who never read the chat code, placed by the lead at the end of
    round 7 and measured once then (figures in bench_chat's history). Not tuned to: no
    accuracy floor, only what must hold for any question: no answer leaks a step's solution
    or expected values, and a question is answered, refused or declined, never left empty."""
    path = HERE / "heldout7.yaml"
    if not path.exists():
        pytest.skip("the seventh held-out set is placed by the lead at the end of round 7")
    report = evaluate(Tutor(load_course()), load_cases(path))
    assert report.results and report.leaks == 0
    assert all(r.answer.kind != "empty" and r.answer.text.strip() for r in report.results)

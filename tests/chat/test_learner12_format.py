"""The frozen learner question set 12 (``tests/chat/learner12/test.yaml``) is well formed.

The checks are shared with sets 9 to 11 (``frozen_questions.py``; the item model is set 2's): the
counts the set promises, that it shares no source with any earlier question set (sets 1 to 11
included), with the diagnosis corpora, with the chat's cards or with the judged records that existed
when it was built, that translations sit right after their originals, that the text is in the item's
language, that every lesson of the course is asked about, that no two solution requests name the
same exercise step (all five name a step an earlier set named: sets 1 to 11 had named every step,
README.md), and that each value item's snippet prints its ``expected`` output on the installed
torch. They never call the chat, so they cannot leak the split into it.
"""

from __future__ import annotations

from frozen_questions import FrozenSet

SET = FrozenSet(
    folder="learner12",
    # The split is frozen (committed once as "frozen test split"); an edit must show, not slip in.
    sha256="662ab3b5b042ceb103cdc2f95be7ebaccdf98bebd36470473989de99512bb535",
    # What the set promises (README.md): per language, and the least per kind or origin.
    per_language=27,
    at_least={"value": 4, "solution": 5, "off_topic": 8, "real zh": 7},
    # All 20 lessons of the course are the topic of a question (README.md).
    lessons_asked=20,
    # Every judged record that existed when this set was built (later ones may score this set).
    judged_days=(
        "2026-12-03",
        "2026-12-04",
        "2026-12-05-chat3",
        "2026-12-06",
        "2026-12-06-b",
        "2026-12-06-c",
        "2026-12-06-chatfacts",
        "2026-12-06-d",
        "2026-12-06-e",
        "2026-12-06-f",
    ),
    least_threads=1250,
    # Sets 1 to 11 had named all 79 exercise steps; the five solution requests each reuse a
    # different step an earlier set named (README.md).
    reused_steps=5,
)


def test_the_split_is_unchanged_since_it_was_frozen() -> None:
    SET.check_frozen()


def test_counts_by_language_kind_and_origin() -> None:
    SET.check_counts()


def test_ids_follow_the_source_and_sources_are_used_once_per_language() -> None:
    SET.check_ids_and_sources()


def test_a_translation_sits_right_after_its_english_original() -> None:
    SET.check_translations_follow_originals()


def test_text_is_in_the_items_language() -> None:
    SET.check_text_language()


def test_most_lessons_of_the_course_are_asked_about() -> None:
    SET.check_lessons_asked()


def test_solution_requests_name_an_exercise_step_once() -> None:
    SET.check_solution_steps_are_new()


def test_no_source_of_an_earlier_set_is_reused() -> None:
    SET.check_no_source_reused()


def test_value_snippets_are_pasted_code_that_prints_what_expected_says() -> None:
    SET.check_value_snippets()

"""The frozen learner question set 10 (``tests/chat/learner10/test.yaml``) is well formed.

The checks are shared with set 9 (``frozen_questions.py``; the item model is set 2's): the counts
the set promises, that it shares no source with any earlier question set (sets 1 to 9 included),
with the diagnosis corpora (corpus9 included), with the chat's cards or with the judged records that
existed when it was built, that translations sit right after their originals, that the text is in
the item's language, that most lessons of the course are asked about, that solution requests name
exercise steps no earlier set named, and that each value item's snippet prints its ``expected``
output on the installed torch. They never call the chat, so they cannot leak the split into it.
"""

from __future__ import annotations

from frozen_questions import FrozenSet

SET = FrozenSet(
    folder="learner10",
    # The split is frozen (committed once as "frozen test split"); an edit must show, not slip in.
    sha256="4f0e195690efa536d04960f00052366b37101955c8e95404883b85a756053be5",
    # What the set promises (README.md): per language, and the least per kind or origin.
    per_language=27,
    at_least={"value": 4, "solution": 5, "off_topic": 8, "real zh": 7},
    # 12 of the 20 lessons are the topic of a question (README.md says which are not).
    lessons_asked=12,
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
    ),
    least_threads=1150,
    not_earlier=("learner11", "learner12"),
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


def test_solution_requests_name_an_exercise_no_earlier_set_named() -> None:
    SET.check_solution_steps_are_new()


def test_no_source_of_an_earlier_set_is_reused() -> None:
    SET.check_no_source_reused()


def test_value_snippets_are_pasted_code_that_prints_what_expected_says() -> None:
    SET.check_value_snippets()

"""The frozen learner question set 9 (``tests/chat/learner9/test.yaml``) is well formed.

The checks are shared with later sets (``frozen_questions.py``; the item model, the language
pattern and the snippet runner are set 2's, ``test_learner2_format.py``). These tests check the data
only: the counts the set promises, that it shares no source with any earlier question set (sets 1 to
8 included), with the diagnosis corpora (corpus8 included), with the chat's cards or with the judged
records that existed when it was built, that translations sit right after their originals, that
most lessons of the course are asked about, that solution requests name exercise steps no earlier
set named, and that each value item's snippet prints its ``expected`` output on the installed torch.
They never call the chat, so they cannot leak the split into it.
"""

from __future__ import annotations

from frozen_questions import FrozenSet

SET = FrozenSet(
    folder="learner9",
    # The split is frozen (committed once as "frozen test split"); an edit must show, not slip in.
    sha256="78f0c4d00b959b81cedf605d33fc814b474188158533833423ca9f24039c31d4",
    # What the set promises (README.md): per language, and the least per kind or origin (the 5 real
    # Chinese posts that no earlier set cites are all off-topic; see README.md).
    per_language=27,
    at_least={"value": 4, "solution": 5, "off_topic": 9, "real zh": 5},
    # A smaller set than set 8: at least this many of the course's lessons are asked about (16 of
    # 20: none for data-norm, non-scalar, dynamic-graph or review).
    lessons_asked=16,
    # The judged records that existed when this set was built (later ones may score this set).
    judged_days=(
        "2026-12-03",
        "2026-12-04",
        "2026-12-05-chat3",
        "2026-12-06",
        "2026-12-06-b",
        "2026-12-06-c",
        "2026-12-06-chatfacts",
    ),
    least_threads=1100,  # sets, corpora, cards and records were read: about 1160 threads
    # Sets built after this one are not earlier material.
    not_earlier=("learner10", "learner11", "learner12"),
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

"""corpus12, the frozen test split that follows corpus11: its format, the promises its README
makes (size, mix, sources never used before), that test.yaml is the file that was frozen, and
that every program still does on this torch what its record says. Runs the programs, never the
diagnosis engine."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from .frozen_corpus import (
    assert_mix,
    assert_sources_new,
    assert_valid_and_recorded,
    judged_places,
    load_recorder,
    unexplained_families,
)

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
CORPUS = HERE / "corpus12" / "test.yaml"
EARLIER_SETS = (
    "corpus",
    "corpus2",
    "corpus3",
    "corpus4",
    "corpus5",
    "corpus6",
    "corpus7",
    "corpus8",
    "corpus9",
    "corpus10",
    "corpus11",
    "heldout",
    "heldout2",
    "error_space",
    "shapes_dev",
    "silent_dev",
)
JUDGED_LATER: tuple[str, ...] = ()
"""The judged records of this set's own scoring and after: they quote its sources (none yet)."""
OTHER_PLACES = judged_places(ROOT, JUDGED_LATER)
"""The chat material (learner11 included) and every judged benchmark run so far."""
FROZEN_SHA256 = "0276393ec01650583d89192c8136b4316dd588f8de9eb98715bf92731b675573"

record = load_recorder("corpus12")
ITEMS = record.load_items()


def test_test_yaml_is_the_frozen_file() -> None:
    """Any edit of test.yaml after the freezing commit fails here (the split is scored once)."""
    assert hashlib.sha256(CORPUS.read_bytes()).hexdigest() == FROZEN_SHA256


def test_every_item_is_valid_and_recorded_on_this_torch_line() -> None:
    assert_valid_and_recorded(ITEMS)


def test_the_mix_is_the_one_the_readme_promises() -> None:
    """24 to 32 items, 40-60% silent, half or more inside a function or class, at least 4
    Chinese sources, at least 18 families, no family above two items."""
    assert_mix(ITEMS, chinese=4, families=18)


def test_families_new_to_earlier_sets_say_what_they_are() -> None:
    earlier = ["corpus2/dev.yaml"] + [f"{name}/test.yaml" for name in EARLIER_SETS[1:11]]
    assert unexplained_families(ITEMS, [HERE / path for path in earlier]) == []


def test_sources_are_distinct_and_none_was_used_before() -> None:
    assert_sources_new(ITEMS, EARLIER_SETS, OTHER_PLACES)


@pytest.mark.slow
def test_every_program_reproduces_its_record(capsys: pytest.CaptureFixture[str]) -> None:
    """All programs, each in a child of one worker process (the recorder's --check)."""
    status = record.main(["--check"])
    report = capsys.readouterr().out
    assert status == 0, report
    assert f"{len(ITEMS)}/{len(ITEMS)} programs reproduce their record" in report

"""corpus8, the frozen test split that follows corpus7: its format, the promises its README
makes (size, mix, sources never used before), that test.yaml is the file that was frozen, and
that every program still does on this torch what its record says. Runs the programs, never the
diagnosis engine."""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path

import pytest

from .frozen_corpus import earlier_sources, families_of, load_recorder, normalized

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
CORPUS = HERE / "corpus8" / "test.yaml"
EARLIER_SETS = (
    "corpus",
    "corpus2",
    "corpus3",
    "corpus4",
    "corpus5",
    "corpus6",
    "corpus7",
    "heldout",
    "heldout2",
    "error_space",
    "shapes_dev",
    "silent_dev",
)
# Sources used by the chat material and by the judged benchmark runs are off limits too
# (only their URLs are read, with the regular expressions of frozen_corpus).
JUDGED_LATER = ('2026-12-06-c', '2026-12-06-d')
"""The judged records of this set's own scoring and after: they quote its sources."""
OTHER_PLACES = (
    ROOT / "tests" / "chat",
    ROOT / "tutor" / "chat" / "cards",
    *(day for day in sorted((ROOT / "benchmarks" / "judged").iterdir())
      if day.is_dir() and day.name not in JUDGED_LATER),
)
FROZEN_SHA256 = "d43a0bd5ee419158313096aebf0bc4c8767bb92fc703f8196c1bf40925e1e443"

record = load_recorder("corpus8")
ITEMS = record.load_items()


def test_test_yaml_is_the_frozen_file() -> None:
    """Any edit of test.yaml after the freezing commit fails here (the split is scored once)."""
    assert hashlib.sha256(CORPUS.read_bytes()).hexdigest() == FROZEN_SHA256


def test_every_item_is_valid_and_recorded_on_this_torch_line() -> None:
    ids = [item.id for item in ITEMS]
    assert len(ids) == len(set(ids))
    for item in ITEMS:
        assert item.observed is not None, item.id
        assert item.observed.torch.startswith("2.13.0"), item.id


def test_the_mix_is_the_one_the_readme_promises() -> None:
    total = len(ITEMS)
    silent = sum(item.kind == "silent" for item in ITEMS)
    inside_code = sum(item.scope != "module" for item in ITEMS)
    chinese = sum(item.id.endswith("-zh") for item in ITEMS)
    assert 30 <= total <= 36
    assert 0.40 <= silent / total <= 0.60
    assert inside_code / total >= 0.50
    assert chinese >= 6
    assert len({item.family for item in ITEMS}) >= 24


def test_no_family_is_overrepresented() -> None:
    """Many families, each mechanism at most twice (no family has more than two items)."""
    counts = Counter(item.family for item in ITEMS)
    assert max(counts.values()) <= 2


def test_families_new_to_earlier_sets_say_what_they_are() -> None:
    known: set[str] = set()
    for path in (
        "corpus2/dev.yaml",
        "corpus2/test.yaml",
        "corpus3/test.yaml",
        "corpus4/test.yaml",
        "corpus5/test.yaml",
        "corpus6/test.yaml",
        "corpus7/test.yaml",
    ):
        known |= families_of(HERE / path)
    unexplained = [item.id for item in ITEMS if item.family not in known and not item.family_note]
    assert unexplained == []


def test_sources_are_distinct_and_none_was_used_before() -> None:
    sources = [normalized(str(item.source)) for item in ITEMS]
    assert len(sources) == len(set(sources))
    earlier = earlier_sources(EARLIER_SETS, OTHER_PLACES)
    assert len(earlier) > 1000  # the earlier sets were found and read: the check below has teeth
    assert sorted(set(sources) & earlier) == []


@pytest.mark.slow
def test_every_program_reproduces_its_record(capsys: pytest.CaptureFixture[str]) -> None:
    """All programs, each in a child of one worker process (the recorder's --check)."""
    status = record.main(["--check"])
    report = capsys.readouterr().out
    assert status == 0, report
    assert f"{len(ITEMS)}/{len(ITEMS)} programs reproduce their record" in report

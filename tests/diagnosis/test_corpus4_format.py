"""corpus4, the frozen test split that follows corpus3: its format, the promises its README
makes (size, mix, sources never used before), and that every program still does on this
torch what its record says. Runs the programs, never the diagnosis engine."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from .frozen_corpus import families_of, load_recorder

HERE = Path(__file__).resolve().parent
EARLIER_SETS = ("corpus", "corpus2", "corpus3", "heldout", "heldout2")
_URL = re.compile(r"https?://[^\s\"'<>)\]]+")


record = load_recorder("corpus4")
ITEMS = record.load_items()


def _normalized(url: str) -> str:
    """The same page however it was written: no scheme, no www., no trailing slash or dot."""
    url = re.sub(r"^https?://(www\.)?", "", url.strip().lower())
    return url.rstrip("/.,;:")


def _earlier_urls() -> Iterator[str]:
    """Every URL in the files of the earlier sets: their `source` fields, READMEs, comments."""
    for name in EARLIER_SETS:
        for path in sorted((HERE / name).rglob("*")):
            if path.is_file():
                yield from _URL.findall(path.read_text(encoding="utf-8", errors="replace"))


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
    assert 50 <= total <= 60
    assert 0.40 <= silent / total <= 0.50
    assert inside_code / total >= 0.40
    assert chinese >= 12
    assert len({item.family for item in ITEMS}) >= 30


def test_families_new_to_corpus2_and_corpus3_say_what_they_are() -> None:
    known: set[str] = set()
    for path in ("corpus2/dev.yaml", "corpus2/test.yaml", "corpus3/test.yaml"):
        known |= families_of(HERE / path)
    unexplained = [item.id for item in ITEMS if item.family not in known and not item.family_note]
    assert unexplained == []


def test_sources_are_distinct_and_none_was_used_by_an_earlier_set() -> None:
    sources = [_normalized(str(item.source)) for item in ITEMS]
    assert len(sources) == len(set(sources))
    earlier = {_normalized(url) for url in _earlier_urls()}
    assert len(earlier) > 200  # the earlier sets were found and read: the check below has teeth
    assert sorted(set(sources) & earlier) == []


@pytest.mark.slow
def test_every_program_reproduces_its_record(capsys: pytest.CaptureFixture[str]) -> None:
    """All programs, each in a child of one worker process (the recorder's --check)."""
    status = record.main(["--check"])
    report = capsys.readouterr().out
    assert status == 0, report
    assert f"{len(ITEMS)}/{len(ITEMS)} programs reproduce their record" in report

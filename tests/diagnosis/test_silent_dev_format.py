"""silent_dev, the dev set of silent bugs: its items are valid in corpus3's format, each is a
silent program from its own public source, and (slow) each still does what its record says."""

from __future__ import annotations

import pytest

from .frozen_corpus import load_recorder

record = load_recorder("silent_dev")
ITEMS = record.load_items()


def test_every_item_is_a_recorded_silent_program_from_its_own_source() -> None:
    assert len(ITEMS) >= 15
    assert len({item.id for item in ITEMS}) == len(ITEMS)
    assert len({str(item.source) for item in ITEMS}) == len(ITEMS)
    for item in ITEMS:
        assert item.kind == "silent" and item.symptom, item.id
        assert item.observed is not None and item.observed.torch.startswith("2.13.0"), item.id


@pytest.mark.slow
def test_every_program_reproduces_its_record(capsys: pytest.CaptureFixture[str]) -> None:
    status = record.main(["--check"])
    report = capsys.readouterr().out
    assert status == 0, report
    assert f"{len(ITEMS)}/{len(ITEMS)} programs reproduce their record" in report

"""silent_dev, the dev set of silent bugs: its items are valid in corpus3's format, each is a
silent program from its own public source, and (slow) each still does what its record says."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

HERE = Path(__file__).resolve().parent


def _recorder() -> ModuleType:
    spec = importlib.util.spec_from_file_location("silent_dev_record",
                                                  HERE / "silent_dev" / "record.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


record = _recorder()
ITEMS = record.recorder.load_items(record.CORPUS)


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

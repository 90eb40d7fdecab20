"""corpus3, the frozen test split of learner programs: its format, its promises, and that every
program still does on this torch what its record says. Runs the programs, never the engine."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest
from pydantic import ValidationError
from ruamel.yaml import YAML

HERE = Path(__file__).resolve().parent


def _load_record() -> ModuleType:
    spec = importlib.util.spec_from_file_location("corpus3_record", HERE / "corpus3" / "record.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # pydantic resolves the models' annotations through it
    spec.loader.exec_module(module)
    return module


record = _load_record()
ITEMS = record.load_items()


def test_every_item_has_its_fields_and_a_record() -> None:
    assert all(item.observed is not None for item in ITEMS)
    assert all(item.observed.torch.startswith("2.13.0") for item in ITEMS)
    ids = [item.id for item in ITEMS]
    assert len(ids) == len(set(ids))


def test_counts_the_split_promises() -> None:
    total = len(ITEMS)
    silent = sum(item.kind == "silent" for item in ITEMS)
    raising_in_code = sum(item.kind == "exception" and item.scope != "module" for item in ITEMS)
    assert total >= 70
    assert silent / total >= 0.35
    assert raising_in_code / total >= 0.30
    assert len({item.family for item in ITEMS}) >= 25


def test_sources_are_distinct_and_new_to_corpus2() -> None:
    sources = [str(item.source) for item in ITEMS]
    assert len(sources) == len(set(sources))
    safe = YAML(typ="safe")
    corpus2 = HERE / "corpus2"
    used_before = {
        str(raw["source"])
        for name in ("dev.yaml", "test.yaml")
        for raw in safe.load((corpus2 / name).read_text(encoding="utf-8"))["items"]
    }
    assert not used_before & set(sources)


def _valid_raw() -> dict[str, object]:
    return {
        "id": "made-up", "source": "https://example.org/q", "kind": "exception",
        "scope": "module", "family": "lost-graph", "root_lines": [2],
        "fix": "call the right thing instead", "code": "import torch\nx = 1\n",
    }


@pytest.mark.parametrize("change", [
    {"root_lines": [3]},            # past the end of the code
    {"root_lines": [0]},
    {"family": "brand-new"},        # a new family needs a family_note
    {"kind": "silent"},             # a silent item needs a symptom
    {"symptom": "loss stays flat"},  # an exception item has none
    {"observed": {"outcome": "ok", "torch": "2.13.0+cpu"}},  # exception kind, ok outcome
    {"observed": {"outcome": "error", "torch": "2.13.0+cpu"}},  # error without type and line
])
def test_the_model_rejects_broken_items(change: dict[str, object]) -> None:
    record.Item.model_validate(_valid_raw())
    with pytest.raises(ValidationError):
        record.Item.model_validate({**_valid_raw(), **change})


def test_printed_numbers_compare_up_to_rounding_only() -> None:
    assert record.same_text("loss 0.123456\n", "loss 0.1234561\n")
    assert record.same_text("w nan\n", "w nan\n")
    assert not record.same_text("loss 0.1234\n", "loss 0.2234\n")
    assert not record.same_text("changed: False\n", "changed: True\n")
    assert not record.same_text("loss 1.0\n", "loss 1.0 2.0\n")


def test_a_trained_value_may_drift_between_cpus_within_its_sign_and_size() -> None:
    # (seen: a BatchNorm's running mean after training, a trained model's sensitivity, on an
    # AVX2 machine against the machine that recorded them)
    assert record.same_text("moved by 0.5810\n", "moved by 0.5830\n")
    assert record.same_text("change: 0.3772\n", "change: 0.3012\n")
    assert not record.same_text("change: 0.0\n", "change: 0.3012\n")
    assert not record.same_text("mean -0.5\n", "mean 0.5\n")
    assert not record.same_text("loss 1.0\n", "loss 2.0\n")


def test_a_diverged_value_compares_by_its_order_of_magnitude() -> None:
    # clip-grad-after-step-vgrnn's losses explode; another CPU rounds them differently
    assert record.same_text("loss 2.577e+22\n", "loss 1.119e+23\n")
    assert not record.same_text("loss 2.577e+22\n", "loss 2.577e+24\n")
    assert not record.same_text("loss 2.577e+22\n", "loss -2.577e+22\n")
    assert not record.same_text("loss 1.5e+05\n", "loss 1.6e+05\n")  # not diverged: rounding only
    assert not record.same_text("loss inf\n", "loss 3e+38\n")


def test_a_value_on_the_way_to_diverging_compares_by_its_order_of_magnitude() -> None:
    # zero-grad-per-epoch-cifar-lab-ko: the third epoch's loss differs by 1.6% on another CPU
    assert record.same_text("loss 594888.662\nloss 36598474.578\n",
                            "loss 604428.289\nloss 29686448.528\n")
    assert not record.same_text("loss 594888.662\nloss 36.5\n", "loss 604428.289\nloss 36.5\n")
    assert not record.same_text("loss 1.5e+03\nloss 2e+07\n", "loss 1.6e+03\nloss 2e+07\n")


@pytest.mark.slow
def test_every_program_reproduces_its_record() -> None:
    results = record.run_programs({item.id: item.code for item in ITEMS})
    mismatched = {item.id: found for item in ITEMS
                  if (found := record.differences(item, results[item.id]))}
    assert mismatched == {}

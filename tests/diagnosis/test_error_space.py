"""Torch's own error space and silent-bug classes from public checklists, on programs written
for each (tests/diagnosis/error_space/*.yaml): every program gets at least the verdict its
``floor`` names (right: the family, a root-cause line and a fix whose re-run worked), never a
specific diagnosis of another family, and every diagnosis keeps the text contract. Judged
with bench_diagnosis's rubric (benchmarks/bench_error_space.py prints the table)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tutor.diagnosis.contract import violations
from tutor.diagnosis.reasoning import diagnose

from .runs import rubric

RUBRIC = rubric()
FAMILIES, judge, load_split = RUBRIC.FAMILIES, RUBRIC.judge, RUBRIC.load_split

FOLDER = Path(__file__).parent / "error_space"
SPLITS = ("errors", "silent")
RANK = {"right": 3, "family only": 2, "generic": 1, "none": 0, "wrong-specific": -1}
ITEMS = [item for split in SPLITS if (FOLDER / f"{split}.yaml").is_file()
         for item in load_split(split, FOLDER)]


def test_every_program_names_a_family_the_rubric_judges_and_a_line_it_has() -> None:
    assert ITEMS
    for item in ITEMS:
        assert item["family"] in FAMILIES, item["id"]
        assert item["floor"] in RANK, item["id"]
        lines = len(item["code"].splitlines())
        assert all(1 <= n <= lines for n in item["root_lines"]), item["id"]


@pytest.mark.slow
@pytest.mark.parametrize("item", ITEMS, ids=[i["id"] for i in ITEMS])
def test_the_diagnosis_is_at_least_its_floor_and_never_wrong_specific(
        sandbox: Any, item: dict[str, Any]) -> None:
    code = item["code"]
    result = sandbox.run(code)
    assert (result.error is None) == (item["kind"] == "silent"), result.error
    found = diagnose(code, result, sandbox)
    verdict = judge(item, found[0] if found else None)
    first = found[0] if found else None
    shown = (first.id, first.root_line or first.line, first.fix_verified) if first else None
    assert verdict != "wrong-specific", shown
    assert RANK[verdict] >= RANK[item["floor"]], (verdict, shown)
    broken = {d.id: violations(d, code) for d in found}
    assert not any(broken.values()), broken


DEVICES = """import torch
import torch.nn as nn
device = "cuda" if torch.cuda.is_available() else "cpu"
model = nn.Linear(3, 1).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(8, 3), torch.randn(8, 1)
for _ in range(3):
    loss = ((model(x) - y) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""
SAME_DEVICE = ("Expected all tensors to be on the same device, but got mat1 is on cpu, "
               "different from other tensors on cuda:0 (when checking argument in method "
               "wrapper_CUDA_addmm)")


def test_tensors_on_two_devices_as_a_cuda_machine_words_it(sandbox: Any) -> None:
    """CUDA is absent here: the message is the one torch 2.13 prints on a GPU machine for a
    model moved to the GPU and data left on the CPU (the run is made by hand)."""
    from tests.diagnosis.runs import failed, tensor

    run = failed(DEVICES, "RuntimeError", SAME_DEVICE, 8, x=tensor([8, 3]),
                 y=tensor([8, 1]))
    first = diagnose(DEVICES, run, sandbox)[0]
    assert first.id in FAMILIES["device"] and not first.generic, first.id
    assert first.line == 8 and "device" in first.fix.en and "设备" in first.fix.zh
    assert violations(first, DEVICES) == []


# the same programs written right (an item's `right`) get no such diagnosis: the checks read
# the mistake, not the program's shape
RIGHT = [item for item in ITEMS if item.get("right")]


@pytest.mark.slow
@pytest.mark.parametrize("item", RIGHT, ids=[i["id"] for i in RIGHT])
def test_the_program_written_right_gets_no_such_diagnosis(sandbox: Any,
                                                           item: dict[str, Any]) -> None:
    code = item["right"]
    result = sandbox.run(code)
    assert result.ok, result.error
    judged = FAMILIES[item["family"]]
    assert not judged & {d.id for d in diagnose(code, result, sandbox)}


def test_a_list_the_failing_line_names_does_not_hide_the_tensor_a_call_on_it_gives(
        sandbox: Any) -> None:
    """The failing frame records the tuples, lists and arrays its line names (for "must be
    Tensor, not tuple"); a list there must not make a call on it look like no tensor."""
    from tests.diagnosis.runs import verified_diagnosis

    code = """import torch

def early_stop(losses, threshold):
    recent = torch.tensor(losses[-3:])
    return recent < threshold

losses = [0.9, 0.5, 0.3, 0.2]
if early_stop(losses, 0.4):
    print("stop")
"""
    assert "losses" in sandbox.run(code).error.locals
    verified_diagnosis(sandbox, code, {"bool-ambiguous"}, 8, ".all()")

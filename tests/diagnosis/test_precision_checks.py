"""Weights in bfloat16 or float16 updated by steps smaller than the dtype's spacing: the run
measures the share of pushed entries each step leaves unchanged, and the change tried keeps
the weights and their inputs in float32. A learning rate large enough for the dtype, and
float32 weights, are not blamed."""

from __future__ import annotations

from typing import Any

from tutor.diagnosis.flow import Flow
from tutor.diagnosis.precision_checks import _casts

from .runs import found_with_a_working_fix, not_diagnosed

PROGRAM = """import torch
import torch.nn as nn

def train(net, x, y, lr):
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    for _ in range(40):
        loss = ((net(x.to(torch.bfloat16)).float() - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return loss.item()

net = nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 1)).bfloat16()
x, y = torch.randn(64, 8), torch.randn(64, 1)
print(train(net, x, y, lr=1e-5))
"""


def test_steps_that_round_away_are_found_and_float32_is_tried(sandbox: Any) -> None:
    found_with_a_working_fix(sandbox, "updates-rounded-away", 13, ".float()", PROGRAM)


def test_the_run_measures_what_each_step_left_unchanged(sandbox: Any) -> None:
    result = sandbox.run(PROGRAM, instrument=True)
    assert result.evidence is not None and result.evidence.steps
    step = result.evidence.steps[-1]
    assert step.low_precision == "torch.bfloat16" and step.stalled is not None
    assert step.stalled > 0.5
    fine = sandbox.run(PROGRAM.replace("lr=1e-5", "lr=1e-1"), instrument=True)
    assert fine.evidence is not None and fine.evidence.steps[-1].stalled is not None
    assert fine.evidence.steps[-1].stalled < 0.5


def test_every_cast_to_a_low_precision_float_is_found() -> None:
    flow = Flow.of(PROGRAM.replace(".bfloat16()", ".half()"))
    assert flow is not None
    assert sorted(new for _, new in _casts(flow)) == [
        "nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 1)).float()",
        "torch.float32"]


def test_a_learning_rate_the_dtype_can_take_is_not_blamed(sandbox: Any) -> None:
    not_diagnosed(sandbox, "updates-rounded-away", PROGRAM.replace("lr=1e-5", "lr=1e-1"))


def test_float32_weights_are_not_blamed(sandbox: Any) -> None:
    code = PROGRAM.replace(".bfloat16()", "").replace("x.to(torch.bfloat16)", "x")
    not_diagnosed(sandbox, "updates-rounded-away", code)

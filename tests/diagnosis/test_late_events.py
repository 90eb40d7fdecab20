"""Events a silent bug's re-run must see although they come late: an ``eval()`` made inside
the learner's own function, called on a condition after many steps, and forward passes
trained on after the first passes of a backward() line that are recorded in full."""

from __future__ import annotations

from typing import Any

from tutor.diagnosis.checks import counts_late
from tutor.diagnosis.flow import Flow
from tutor.sandbox.evidence import FULL_PER_OP

from .runs import found_with_a_working_fix

PROGRAM = """import torch
import torch.nn as nn

def evaluate(model, x):
    model.eval()
    with torch.no_grad():
        return model(x).mean().item()

def train(model, x, y, every):
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    model.train()
    for step in range(1, 201):
        loss = ((model(x) - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % every == 0:
            print(step, evaluate(model, x))

model = nn.Sequential(nn.Linear(4, 16), nn.Dropout(0.5), nn.Linear(16, 1))
x, y = torch.randn(32, 4), torch.randn(32, 1)
train(model, x, y, every=100)
"""


def test_an_eval_inside_a_function_called_on_a_condition_counts_late() -> None:
    flow = Flow.of(PROGRAM)
    assert flow is not None and counts_late(flow)
    alone = Flow.of(PROGRAM.replace("        if step % every == 0:\n            print(",
                                    "        print(").replace("every=100", "every=1"))
    assert alone is not None and not counts_late(alone)


def test_passes_trained_on_after_the_recorded_ones_still_count(sandbox: Any) -> None:
    result = sandbox.run(PROGRAM, instrument=True)
    assert result.evidence is not None
    late = [m for m in result.evidence.modules if not m.training and m.grad_enabled]
    # steps 101 to 200 run in eval mode: well past the passes recorded in full
    assert FULL_PER_OP < 100 and late and late[0].backward == late[0].count == 100


def test_the_eval_left_on_at_step_100_is_found_and_undone(sandbox: Any) -> None:
    found_with_a_working_fix(sandbox, "train-mode-not-restored", 5, "model.train()", PROGRAM)

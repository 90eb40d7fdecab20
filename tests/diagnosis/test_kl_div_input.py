"""kl_div given probabilities as its input: it expects log-probabilities (it computes
``target * (log(target) - input)``), so the training follows something that is not a KL
divergence. The run's record of what the loss was given finds it; the change tried is
log_softmax where the input is made. An input that is log-probabilities is not blamed."""

from __future__ import annotations

from typing import Any

from .runs import found_with_a_working_fix, not_diagnosed

PROGRAM = """import torch
import torch.nn as nn
import torch.nn.functional as F

def distill(student, teacher, x, opt):
    s = F.softmax(student(x), dim=1)
    with torch.no_grad():
        t = F.softmax(teacher(x), dim=1)
    loss = F.kl_div(s, t, reduction="batchmean")
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss.item()

student, teacher = nn.Linear(6, 4), nn.Linear(6, 4)
opt = torch.optim.SGD(student.parameters(), lr=0.5)
x = torch.randn(32, 6)
for _ in range(60):
    value = distill(student, teacher, x, opt)
print(value)
"""


def test_probabilities_given_to_kl_div_get_log_softmax(sandbox: Any) -> None:
    found_with_a_working_fix(sandbox, "kl-div-given-probabilities", 6, "F.log_softmax(", PROGRAM)


def test_the_run_records_what_kl_div_was_given(sandbox: Any) -> None:
    result = sandbox.run(PROGRAM, instrument=True)
    assert result.evidence is not None
    given = [g for g in result.evidence.training.loss_inputs if g.loss == "kl_div"]
    assert given and given[0].producer == "softmax" and given[0].sums_to_one is True
    assert given[0].log_probs is False


def test_log_probabilities_are_not_blamed(sandbox: Any) -> None:
    right = PROGRAM.replace("s = F.softmax(", "s = F.log_softmax(")
    not_diagnosed(sandbox, "kl-div-given-probabilities", right)

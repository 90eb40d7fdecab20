"""A running total of the loss that keeps every batch's graph, on small programs of their own:
``running += loss`` begun at a number is found and ``loss.item()`` tried; a total built to be
differentiated, and one that already adds numbers, are not diagnosed."""

from __future__ import annotations

from typing import Any

from tutor.diagnosis.reasoning import diagnose

from .runs import verified_diagnosis

LOOP = """import torch
import torch.nn as nn
torch.manual_seed(0)
x = torch.randn(48, 3)
y = x @ torch.tensor([[1.0], [2.0], [-1.0]])
model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)

def epoch():
    running = 0.0
    for i in range(0, 48, 12):
        loss = ((model(x[i:i + 12]) - y[i:i + 12]) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        running {add}
    return running / 4

for e in range(3):
    print("epoch", e, epoch())
"""


def test_a_running_total_of_loss_tensors_adds_their_values(sandbox: Any) -> None:
    code = LOOP.format(add="+= loss")
    assert sandbox.run(code).ok
    first = verified_diagnosis(sandbox, code, {"loss-total-keeps-graph"}, 16,
                               "running += loss.item()")
    assert "grad_fn" in (first.fix_check.en if first.fix_check else "")


def test_totals_of_numbers_or_built_to_differentiate_are_not_diagnosed(sandbox: Any) -> None:
    summed = LOOP.format(add="+= loss.item()")
    built = """import torch
w = torch.zeros(3, requires_grad=True)
total = 0.0
for target in (1.0, 2.0, 3.0):
    loss = ((w.sum() - target) ** 2)
    total = total + loss
total.backward()
print(w.grad)
"""
    for code in (summed, built):
        found = diagnose(code, sandbox.run(code), sandbox)
        assert "loss-total-keeps-graph" not in {d.id for d in found}

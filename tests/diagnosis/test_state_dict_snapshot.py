"""``best = model.state_dict()`` kept while training goes on, on a program of its own: the
static pattern is tried, every state_dict() the name is given wrapped in copy.deepcopy, and
shown because the program then prints other weights; a snapshot already copied gets nothing."""

from __future__ import annotations

from typing import Any

from tutor.diagnosis.reasoning import diagnose

from .runs import verified_diagnosis

PROGRAM = """import copy
import torch
import torch.nn as nn
torch.manual_seed(0)
x = torch.randn(64, 3)
y = x @ torch.tensor([[2.0], [-1.0], [0.5]])
model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.5)

def fit(epochs):
    best_loss = float("inf")
    best = {snapshot}
    for epoch in range(epochs):
        loss = ((model(x) - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if loss.item() < best_loss and epoch < 3:
            best_loss = loss.item()
            best = {snapshot}
    return best

model.load_state_dict(fit(8))
print(round(((model(x) - y) ** 2).mean().item(), 4))
"""


def test_a_state_dict_kept_as_the_best_weights_is_snapshotted(sandbox: Any) -> None:
    code = PROGRAM.format(snapshot="model.state_dict()")
    assert sandbox.run(code).ok
    first = verified_diagnosis(sandbox, code, {"state-dict-kept-by-reference"}, 12,
                               "copy.deepcopy(model.state_dict())")
    assert first.patch is not None and first.patch.count("copy.deepcopy(") == 2


def test_a_state_dict_already_deep_copied_is_no_bug(sandbox: Any) -> None:
    code = PROGRAM.format(snapshot="copy.deepcopy(model.state_dict())")
    found = diagnose(code, sandbox.run(code), sandbox)
    assert "state-dict-kept-by-reference" not in {d.id for d in found}

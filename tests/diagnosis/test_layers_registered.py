"""Layers a module never registers, found where the program builds them
(tutor/diagnosis/program_checks.py: check_layers_in_locals, check_layers_in_list): layers in
local variables of ``__init__`` (a typo ``self_fc1`` for ``self.fc1`` too) and a plain list of
such names. Programs of our own, written for the class: the root line and a fix that was
applied and re-run, and nothing of it where the layers are registered."""

from __future__ import annotations

from typing import Any

import pytest

from tutor.diagnosis.reasoning import diagnose

from .runs import verified_diagnosis

TRAIN = """
model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(8, 4)
for _ in range(5):
    optimizer.zero_grad()
    loss = model(x).pow(2).mean()
    loss.backward()
    optimizer.step()
print(round(loss.item(), 4))
"""

LOCALS = """import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        {a} = nn.Linear(4, 8)
        {b} = nn.Linear(8, 1)
        {keep}

    def forward(self, x):
        return {use}
""" + TRAIN

CASES = [
    # a closure over local layers: forward runs them, nothing registers them
    (LOCALS.format(a="fc1", b="fc2", keep="self.net = lambda t: fc2(torch.relu(fc1(t)))",
                   use="self.net(x)"), {"optimizer-empty-params"}, 8, "self.fc1 = nn.Linear"),
    # self_fc1 typed for self.fc1: forward uses the attributes that were never set
    (LOCALS.format(a="self_fc1", b="self_fc2", keep="pass",
                   use="self.fc2(torch.relu(self.fc1(x)))"),
     {"optimizer-empty-params"}, 8, "self.fc1 = nn.Linear"),
    # a plain list of local layers
    (LOCALS.format(a="fc1", b="fc2", keep="self.layers = [fc1, fc2]",
                   use="self.layers[1](torch.relu(self.layers[0](x)))"),
     {"optimizer-empty-params"}, 10, "nn.ModuleList([fc1, fc2])"),
]

SILENT = """import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 8)
        head = nn.Linear(8, 1)
        self.head = lambda t: head(torch.relu(t))

    def forward(self, x):
        return self.head(self.body(x))


model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(32, 4)
y = x.sum(dim=1, keepdim=True)
for _ in range(30):
    optimizer.zero_grad()
    loss = (model(x) - y).pow(2).mean()
    loss.backward()
    optimizer.step()
print(round(loss.item(), 4))
"""


def test_a_local_layer_beside_registered_ones_is_found_from_the_run(sandbox: Any) -> None:
    # no error: the optimizer steps the body, the head's gradients are never applied
    assert sandbox.run(SILENT).ok
    verified_diagnosis(sandbox, SILENT, {"optimizer-wrong-params"}, 9,
                       "self.head_layer = nn.Linear")


@pytest.mark.parametrize(("code", "expected", "root", "fix_has"), CASES)
def test_unregistered_layers_are_found_where_they_are_built(
        sandbox: Any, code: str, expected: set[str], root: int, fix_has: str) -> None:
    first = verified_diagnosis(sandbox, code, expected, root, fix_has)
    assert "line" in first.chain[0].en and "行" in first.chain[0].zh


@pytest.mark.parametrize("keep", [
    "self.fc1, self.fc2 = fc1, fc2",
    "self.body = nn.Sequential(fc1, nn.ReLU(), fc2)",
    "self.layers = nn.ModuleList([fc1, fc2])",
    "self.add_module('fc1', fc1); self.add_module('fc2', fc2)",
])
def test_local_layers_put_on_self_are_registered_and_not_diagnosed(
        sandbox: Any, keep: str) -> None:
    use = {"self.fc1, self.fc2 = fc1, fc2": "self.fc2(torch.relu(self.fc1(x)))",
           "self.body = nn.Sequential(fc1, nn.ReLU(), fc2)": "self.body(x)",
           "self.layers = nn.ModuleList([fc1, fc2])":
               "self.layers[1](torch.relu(self.layers[0](x)))",
           "self.add_module('fc1', fc1); self.add_module('fc2', fc2)":
               "self.fc2(torch.relu(self.fc1(x)))"}[keep]
    code = LOCALS.format(a="fc1", b="fc2", keep=keep, use=use)
    result = sandbox.run(code)
    assert result.ok, result.error
    ids = {d.id for d in diagnose(code, result, sandbox)}
    assert not ids & {"optimizer-empty-params", "optimizer-wrong-params"}, ids


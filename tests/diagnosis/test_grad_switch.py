"""Gradients switched off by ``torch.set_grad_enabled(False)`` called as a statement (an
evaluation helper, corpus14's eval-helper-disables-grad-globally after its scoring): autograd
stays off after the helper returns, and the next training step's backward() fails. The cause
is that statement, and the change tried puts the lines after it under ``with
torch.no_grad():``. A switch turned back on, and a ``with`` block, are not blamed."""

from __future__ import annotations

from typing import Any

from .runs import first_for_error

PROGRAM = """import torch
import torch.nn as nn

def evaluate(model, x):
    model.eval()
    torch.set_grad_enabled(False)
    out = model(x).sum().item()
    model.train()
{restore}    return out

model = nn.Linear(4, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(8, 4)
for epoch in range(2):
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(epoch, evaluate(model, x))
"""


def test_a_switch_left_off_by_a_helper_is_the_root_with_a_scoped_block_tried(
        sandbox: Any) -> None:
    first = first_for_error(sandbox, PROGRAM.format(restore=""))
    assert (first.id, first.root_line, first.fix_verified) == ("grad-switched-off", 6, True)
    assert "with torch.no_grad():" in (first.patch or "")
    assert "`torch.set_grad_enabled(False)`" in first.title.en and "第 6 行" in first.title.zh
    assert any("line 6" in step.en for step in first.chain)


def test_a_with_block_is_no_switch_left_off(sandbox: Any) -> None:
    # the helper scopes its switch; the training's own .detach() is what cuts the graph
    code = PROGRAM.format(restore="").replace(
        "    torch.set_grad_enabled(False)\n    out = model(x).sum().item()",
        "    with torch.set_grad_enabled(False):\n        out = model(x).sum().item()").replace(
        "loss = model(x).pow(2).mean()", "loss = model(x).detach().pow(2).mean()")
    first = first_for_error(sandbox, code)
    assert first.id != "grad-switched-off" and first.root_line == 15, (first.id, first.root_line)

"""A loss (or any value) passed to ``optimizer.step``, which calls its argument as a closure:
``step()`` takes nothing, and that is tried. LBFGS does need a closure, so there the value is
the mistake and this diagnosis is not made."""

from __future__ import annotations

from typing import Any

from .runs import diagnoses_for

STEP = """import torch
torch.manual_seed(0)
net = torch.nn.Linear(3, 1)
opt = torch.optim.Adam(net.parameters(), lr=0.1)


def train_step(x, y):
    loss = (net(x) - y).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step(loss)
    return loss.item()


for i in range(3):
    print(train_step(torch.randn(4, 3), torch.randn(4, 1)))
"""


def test_a_loss_passed_to_step_is_left_out(sandbox: Any) -> None:
    first = diagnoses_for(sandbox, STEP)[0]
    assert (first.id, first.root_line, first.fix_verified) == ("value-given-as-closure", 11,
                                                                True)
    assert first.patch is not None and "+    opt.step()" in first.patch
    assert "`loss`" in first.title.en and "`opt.step`" in first.title.en


LBFGS = STEP.replace("torch.optim.Adam(net.parameters(), lr=0.1)",
                     "torch.optim.LBFGS(net.parameters(), lr=0.1)")


def test_lbfgs_given_a_value_is_not_told_to_step_without_a_closure(sandbox: Any) -> None:
    assert not [d for d in diagnoses_for(sandbox, LBFGS) if d.id == "value-given-as-closure"]

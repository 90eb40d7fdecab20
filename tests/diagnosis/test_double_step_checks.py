"""An optimizer stepped twice for one backward(): the run shows two steps of it with no
backward() between them, pass after pass; the plain extra step is removed and tried. Two
optimizers stepping once each, and one optimizer stepping after each of two backward()
calls, are not this mistake."""

from __future__ import annotations

from typing import Any

from .runs import diagnoses_for

SCALED = """import torch
import torch.nn as nn
torch.manual_seed(0)
net = nn.Linear(4, 1)
opt = torch.optim.Adam(net.parameters(), lr=1e-2)
scaler = torch.amp.GradScaler("cpu")


def update(x, y):
    loss = ((net(x) - y) ** 2).mean()
    opt.zero_grad()
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    opt.step()
    return loss.item()


for step in range(5):
    x = torch.randn(8, 4)
    last = update(x, x.sum(1, keepdim=True))
print("steps counted by Adam:", int(opt.state[net.weight]["step"]), "loss", round(last, 4))
"""


def test_a_plain_step_after_the_scalers_step_is_removed(sandbox: Any) -> None:
    first = diagnoses_for(sandbox, SCALED)[0]
    assert (first.id, first.root_line, first.fix_verified) == (
        "optimizer-stepped-twice", 15, True)
    assert first.patch is not None and "-    opt.step()" in first.patch
    assert "line 13" in first.title.en and "第 13 行" in first.title.zh
    assert first.fix_check is not None and "once per backward()" in first.fix_check.en


ONCE_EACH = """import torch
import torch.nn as nn
torch.manual_seed(0)
gen, disc = nn.Linear(2, 2), nn.Linear(2, 1)
opt_g = torch.optim.SGD(gen.parameters(), lr=0.1)
opt_d = torch.optim.SGD(disc.parameters(), lr=0.1)
shared = nn.Linear(2, 1)
opt_s = torch.optim.SGD(shared.parameters(), lr=0.1)
for step in range(4):
    z = torch.randn(8, 2)
    opt_d.zero_grad()
    disc(gen(z).detach()).mean().backward()
    opt_d.step()
    opt_g.zero_grad()
    (-disc(gen(z)).mean()).backward()
    opt_g.step()
    opt_s.zero_grad()
    shared(z).pow(2).mean().backward()
    opt_s.step()
    opt_s.zero_grad()
    shared(z).abs().mean().backward()
    opt_s.step()
print("done")
"""


def test_steps_each_after_their_own_backward_are_not_doubled(sandbox: Any) -> None:
    assert all(d.id != "optimizer-stepped-twice" for d in diagnoses_for(sandbox, ONCE_EACH))

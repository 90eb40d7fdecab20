"""Models and samples built wrong that train without an error: a module list made by
multiplication, a BatchNorm momentum in TensorFlow's convention, a reparameterised sample
drawn with sample(). Each change is tried; the programs written right get none of these."""

from __future__ import annotations

from typing import Any

import pytest

from .runs import diagnoses_for

REPEATED = """import torch
import torch.nn as nn
torch.manual_seed(0)


class Tower(nn.Module):
    def __init__(self, depth):
        super().__init__()
        self.blocks = nn.Sequential(*{blocks})
        self.out = nn.Linear(4, 1)

    def forward(self, x):
        return self.out(self.blocks(x))


net = Tower(3)
print("parameters:", sum(p.numel() for p in net.parameters()))
"""

MOMENTUM = """import torch
import torch.nn as nn
torch.manual_seed(0)
net = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4, momentum={momentum}), nn.Linear(4, 1))
opt = torch.optim.SGD(net.parameters(), lr=0.05)
for step in range(20):
    x = torch.randn(16, 3) * (1 + step % 3)
    loss = (net(x) - x.sum(1, keepdim=True)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
net.eval()
with torch.no_grad():
    print("eval loss:", round((net(x) - x.sum(1, keepdim=True)).pow(2).mean().item(), 4))
"""

SAMPLED = """import torch
import torch.nn as nn
from torch.distributions import Normal
torch.manual_seed(0)
enc, dec = nn.Linear(4, 4), nn.Linear(2, 4)
opt = torch.optim.Adam([*enc.parameters(), *dec.parameters()], lr=1e-2)
data = torch.randn(64, 4)
for step in range(30):
    mu, log_std = enc(data).chunk(2, dim=1)
    z = Normal(mu, log_std.exp()).{draw}
    loss = ((dec(z) - data) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print("encoder weight norm:", round(enc.weight.norm().item(), 4))
"""

CASES = [
    ("module-list-multiplied", 9, "for _ in range(depth)",
     REPEATED.format(blocks="depth * [nn.Linear(4, 4)]"),
     REPEATED.format(blocks="[nn.Linear(4, 4) for _ in range(depth)]")),
    ("batchnorm-momentum-convention", 4, "momentum=0.01",
     MOMENTUM.format(momentum="0.99"), MOMENTUM.format(momentum="0.1")),
    ("sample-without-graph", 10, ".rsample()",
     SAMPLED.format(draw="sample()"), SAMPLED.format(draw="rsample()")),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_found_with_its_change_tried_and_not_in_the_program_written_right(
        sandbox: Any, case: tuple[str, int, str, str, str]) -> None:
    expected, root, fix_has, code, right = case
    first = diagnoses_for(sandbox, code)[0]
    assert (first.id, first.root_line, first.fix_verified) == (expected, root, True)
    assert first.patch is not None and fix_has in first.patch
    assert first.chain and all(step.en and step.zh for step in first.chain)
    assert expected not in {d.id for d in diagnoses_for(sandbox, right)}


REINFORCE = """import torch
import torch.nn as nn
from torch.distributions import Categorical
torch.manual_seed(0)
policy = nn.Linear(3, 2)
opt = torch.optim.SGD(policy.parameters(), lr=0.1)
for step in range(10):
    dist = Categorical(logits=policy(torch.randn(1, 3)))
    action = dist.sample()
    loss = -(dist.log_prob(action) * (1.0 if action.item() == 0 else -1.0)).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
print(policy.weight.round(decimals=3))
"""


def test_a_sample_whose_log_prob_is_trained_is_left_alone(sandbox: Any) -> None:
    assert "sample-without-graph" not in {d.id for d in diagnoses_for(sandbox, REINFORCE)}

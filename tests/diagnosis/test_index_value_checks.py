"""Positions used as values (corpus15 dqn-argmax-index-as-next-q, after its scoring): the
recorder's history of the loss shows integer positions made by argmax (or max(dim)'s
indices) turned into floating-point values by arithmetic, and the change tried takes the
values instead. Positions used to index (a double-DQN's gather) are not flagged."""

from __future__ import annotations

from typing import Any

import pytest

from .runs import found_with_a_working_fix, not_diagnosed

TARGET = """import torch
import torch.nn as nn
torch.manual_seed(0)


class Agent:
    def __init__(self):
        self.q = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))
        self.opt = torch.optim.SGD(self.q.parameters(), lr=0.05)

    def learn(self, s, a, r, s2):
        with torch.no_grad():
            best = {best}
        target = r + 0.9 * best
        taken = self.q(s).gather(1, a.unsqueeze(1)).squeeze(1)
        loss = ((taken - target) ** 2).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()


agent = Agent()
for step in range(40):
    s, s2 = torch.randn(32, 6), torch.randn(32, 6)
    a, r = torch.randint(0, 3, (32,)), torch.zeros(32)
    last = agent.learn(s, a, r, s2)
print(round(last, 4))
"""


@pytest.mark.parametrize(("best", "fix_has"), [
    ("self.q(s2).argmax(dim=1)", "self.q(s2).amax(dim=1)"),
    ("self.q(s2).max(1)[1]", "self.q(s2).max(1)[0]"),
    ("self.q(s2).max(dim=1).indices", "self.q(s2).max(dim=1).values"),
])
def test_a_target_built_from_positions_takes_the_values(sandbox: Any, best: str,
                                                        fix_has: str) -> None:
    found_with_a_working_fix(sandbox, "index-used-as-value", 13, fix_has,
                             TARGET.format(best=best))


def test_values_and_positions_used_to_index_are_not_flagged(sandbox: Any) -> None:
    not_diagnosed(sandbox, "index-used-as-value", TARGET.format(best="self.q(s2).amax(1)"))
    double = "self.q(s2).gather(1, self.q(s2).argmax(1, keepdim=True)).squeeze(1)"
    not_diagnosed(sandbox, "index-used-as-value", TARGET.format(best=double))

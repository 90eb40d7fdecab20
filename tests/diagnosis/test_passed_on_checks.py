"""A flag a function takes and never reads, not passed on to the call of the program that
takes it (tutor/diagnosis/passed_on_checks.py), on programs of its own."""

from __future__ import annotations

from typing import Any

import pytest

from .runs import found_with_a_working_fix, not_diagnosed

BLOCKS = """import torch
import torch.nn as nn
torch.manual_seed(0)


class Noise(nn.Module):
    def forward(self, x, training=True):
        return x + torch.randn_like(x) if training else x


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.noise = Noise()
        self.fc = nn.Linear(4, 2)

    def forward(self, x, training=True):
        return self.fc({inner})


net = Net()
x = torch.ones(3, 4)
with torch.no_grad():
    print(net(x, training=False).sum().item(), net(x, training=False).sum().item())
"""

HELPER = """import torch
torch.manual_seed(0)


def augment(x, strength=0.5):
    return x * (1 + strength * torch.rand_like(x))


def batch(x, strength=0.5):
    return {inner}


print(batch(torch.ones(2, 3), strength=0.0))
"""


@pytest.mark.parametrize(("code", "root", "fix_has", "right"), [
    # a module's forward given training=False calls its block without it
    (BLOCKS.format(inner="self.noise(x)"), 18, "self.noise(x, training=training)",
     BLOCKS.format(inner="self.noise(x, training=training)")),
    # a function's keyword not passed on to the helper that takes the same keyword
    (HELPER.format(inner="augment(x)"), 10, "augment(x, strength=strength)",
     HELPER.format(inner="augment(x, strength=strength)")),
])
def test_a_flag_taken_and_not_passed_on_is_found_where_the_inner_call_is(
        sandbox: Any, code: str, root: int, fix_has: str, right: str) -> None:
    found_with_a_working_fix(sandbox, "argument-not-passed-on", root, fix_has, code)
    not_diagnosed(sandbox, "argument-not-passed-on", right)


def test_an_unread_parameter_nobody_passes_a_value_is_no_mistake(sandbox: Any) -> None:
    # a callback's or an override's argument the program never gives: nothing says it is meant
    code = HELPER.format(inner="augment(x)").replace(", strength=0.0)", ")")
    not_diagnosed(sandbox, "argument-not-passed-on", code)

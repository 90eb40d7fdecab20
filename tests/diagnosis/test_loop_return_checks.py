"""A return indented into a loop (tutor/diagnosis/loop_return_checks.py), on programs of its
own, and the idioms it leaves alone."""

from __future__ import annotations

from typing import Any

import pytest

from .runs import found_with_a_working_fix, not_diagnosed

HEADS = """import torch
import torch.nn as nn


class Heads(nn.Module):
    def __init__(self):
        super().__init__()
        self.heads = nn.ModuleList([nn.Linear(4, 2) for _ in range(3)])

    def forward(self, x):
        total = 0
        for head in self.heads:
            total = total + head(x)
{ret}


model = Heads()
model(torch.randn(5, 4)).sum().backward()
print([h.weight.grad is None for h in model.heads])
"""


def test_a_return_inside_the_loop_is_moved_after_it(sandbox: Any) -> None:
    code = HEADS.format(ret="            return total")
    found_with_a_working_fix(sandbox, "return-inside-loop", 14, "        return total\n",
                             code)
    not_diagnosed(sandbox, "return-inside-loop", HEADS.format(ret="        return total"))


@pytest.mark.parametrize("body", [
    # the first item: the loop is there to take it
    "        for head in self.heads:\n            return head(x)",
    # retried until one fits, then returned
    "        for head in self.heads:\n            out = head(x)\n"
    "            if out.isnan().any():\n                continue\n            return out",
])
def test_loops_meant_to_return_in_a_pass_are_left_alone(sandbox: Any, body: str) -> None:
    code = HEADS.replace("        total = 0\n        for head in self.heads:\n"
                         "            total = total + head(x)\n{ret}", body)
    not_diagnosed(sandbox, "return-inside-loop", code)

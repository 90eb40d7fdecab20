"""Gradient accumulation that sums: several passes of one line before each conditional
step, the loss not divided. The change tried divides it by the number of passes the run saw,
kept only where the step's update shrinks by about that factor; losses of several terms of
one step, and an optimizer that normalises its step, are not blamed."""

from __future__ import annotations

from typing import Any

from .runs import found_with_a_working_fix, not_diagnosed

PROGRAM = """import torch
import torch.nn as nn

model = nn.Linear(6, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(64, 6), torch.randint(0, 2, (64,))
accum = 4
for i, (xb, yb) in enumerate(zip(x.split(8), y.split(8))):
    loss = nn.functional.cross_entropy(model(xb), yb)
    loss.backward()
    if (i + 1) % accum == 0:
        opt.step()
        opt.zero_grad()
print(loss.item())
"""


def test_accumulated_losses_are_divided_by_the_passes_the_run_saw(sandbox: Any) -> None:
    found_with_a_working_fix(sandbox, "accumulation-summed", 10, "(loss / 4).backward()",
                             PROGRAM)


def test_losses_divided_where_they_are_made_are_not_blamed(sandbox: Any) -> None:
    right = PROGRAM.replace("cross_entropy(model(xb), yb)", "cross_entropy(model(xb), yb) / accum")
    not_diagnosed(sandbox, "accumulation-summed", right)


def test_several_terms_of_one_step_are_not_blamed(sandbox: Any) -> None:
    """Two losses back-propagated by one line, then one step every time: meant to add up."""
    terms = PROGRAM.replace("    loss.backward()\n    if (i + 1) % accum == 0:\n"
                            "        opt.step()\n        opt.zero_grad()\n",
                            "    for term in (loss, model(xb).pow(2).mean()):\n"
                            "        term.backward()\n    opt.step()\n    opt.zero_grad()\n")
    assert terms != PROGRAM
    not_diagnosed(sandbox, "accumulation-summed", terms)


def test_adam_whose_step_barely_depends_on_the_scale_is_not_blamed(sandbox: Any) -> None:
    not_diagnosed(sandbox, "accumulation-summed", PROGRAM.replace("optim.SGD", "optim.Adam"))

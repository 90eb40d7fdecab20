"""A local variable assigned only inside one branch of an ``if`` and read after it, on small
programs of their own: the branch and its condition are named, and moving the assignment
above the ``if`` is tried where it needs nothing the branch computes."""

from __future__ import annotations

from typing import Any

from .runs import first_for_error

# the regulariser's term is computed only when its weight is set; the total reads it always
ONE_BRANCH = """import torch
import torch.nn as nn


def total_loss(model, x, y, l1_weight=None):
    pred = model(x)
    if l1_weight is not None:
        penalty = sum(p.abs().sum() for p in model.parameters())
        pred = pred * 1.0
    else:
        l1_weight = 0.0
    return nn.functional.mse_loss(pred, y) + l1_weight * penalty


net = nn.Linear(3, 1)
print(total_loss(net, torch.randn(4, 3), torch.randn(4, 1)).item())
"""


def test_a_variable_set_in_one_branch_is_named_with_its_condition(sandbox: Any) -> None:
    first = first_for_error(sandbox, ONE_BRANCH)
    assert (first.id, first.root_line, first.fix_verified) == ("unbound-in-branch", 8, True)
    assert "`if l1_weight is not None:`" in first.title.en and "false" in first.explanation.en
    assert first.patch is not None and "+    penalty = sum(" in first.patch
    assert "条件为假" in first.explanation.zh


def test_an_assignment_that_needs_its_branch_is_not_moved(sandbox: Any) -> None:
    # the term reads what the branch computes before it: moving it out would read that
    # too early, so no change is offered, only the direction
    code = ONE_BRANCH.replace(
        "        penalty = sum(p.abs().sum() for p in model.parameters())\n"
        "        pred = pred * 1.0\n",
        "        scale = l1_weight * 2\n"
        "        penalty = scale * sum(p.abs().sum() for p in model.parameters())\n")
    first = first_for_error(sandbox, code)
    assert first.id == "unbound-in-branch" and first.root_line == 9
    assert not first.patch and "on every path" in first.fix.en

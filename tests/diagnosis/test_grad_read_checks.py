"""A gradient read in a loop before the backward() of the same pass: the values kept lag one
pass behind. The read moved below the backward() is tried; a read kept on purpose to compare
with the new gradient, and a reset of the gradient, are left alone."""

from __future__ import annotations

from typing import Any

from .runs import diagnoses_for

LAGGING = """import torch
torch.manual_seed(0)
w = torch.randn(3, requires_grad=True)
w.grad = torch.zeros_like(w)
history = []
for step in range(4):
    x = torch.randn(3)
    history.append(w.grad.norm().item())
    w.grad.zero_()
    loss = (w * x).sum() ** 2
    loss.backward()
print([round(h, 3) for h in history])
"""


def test_a_gradient_kept_before_the_backward_of_its_pass_is_moved_below_it(
        sandbox: Any) -> None:
    first = diagnoses_for(sandbox, LAGGING)[0]
    assert (first.id, first.root_line) == ("grad-read-before-backward", 8)
    assert first.fix_verified is True and first.patch is not None
    # the read now comes after the backward() of line 11
    fixed = [line.strip() for line in first.patch.splitlines() if line.startswith("+")]
    assert any("history.append(w.grad.norm().item())" in line for line in fixed)
    assert "line 11" in first.title.en and "第 11 行" in first.title.zh
    assert first.chain and all(step.en and step.zh for step in first.chain)


COMPARED = """import torch
torch.manual_seed(0)
w = torch.randn(3, requires_grad=True)
w.grad = torch.zeros_like(w)
changes = []
for step in range(4):
    x = torch.randn(3)
    before = w.grad.clone()
    loss = (w * x).sum() ** 2
    loss.backward()
    changes.append((w.grad - before).norm().item())
print([round(c, 3) for c in changes])
"""

READ_AFTER = """import torch
torch.manual_seed(0)
w = torch.randn(3, requires_grad=True)
norms = []
for step in range(4):
    x = torch.randn(3)
    if w.grad is not None:
        w.grad.zero_()
    loss = (w * x).sum() ** 2
    loss.backward()
    norms.append(w.grad.norm().item())
print([round(n, 3) for n in norms])
"""


def test_an_old_gradient_kept_to_compare_and_a_reset_are_not_this_mistake(
        sandbox: Any) -> None:
    for code in (COMPARED, READ_AFTER):
        found = diagnoses_for(sandbox, code)
        assert all(d.id != "grad-read-before-backward" for d in found), [d.id for d in found]

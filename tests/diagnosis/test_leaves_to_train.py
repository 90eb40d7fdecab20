""""does not require grad" with several leaves made without ``requires_grad``: the fix tracks
the ones the program means to train (whose ``.grad`` it reads, that it gives an optimizer, or
named as weights), not whichever leaf the history met first (the data ``X``, which makes the
error go away and trains nothing)."""

from __future__ import annotations

from typing import Any

from .runs import verified_diagnosis

WEIGHTS_BY_NAME = """import torch

w = torch.tensor([0.5, -0.3])
b = torch.tensor(0.1)
X = torch.tensor([[1., 2.], [3., 4.]])
target = torch.tensor([1., 0.])
loss = ((X @ w + b - target) ** 2).mean()
loss.backward()
"""

WEIGHTS_BY_USE = """import torch

inputs = torch.randn(8, 3)
slopes = torch.zeros(3)
outputs = torch.randn(8)
for step in range(3):
    pred = inputs @ slopes
    err = ((pred - outputs) ** 2).mean()
    err.backward()
    with torch.no_grad():
        slopes -= 0.1 * slopes.grad
"""

NOTHING_TELLS = """import torch

x = torch.ones(3)
y = torch.full((3,), 2.0)
z = (x * y).sum()
z.backward()
"""


def test_the_weights_are_tracked_not_the_data(sandbox: Any) -> None:
    first = verified_diagnosis(sandbox, WEIGHTS_BY_NAME, {"no-grad-fn-no-leaf"}, 3,
                               "requires_grad=True")
    assert first.patch is not None
    changed = [line for line in first.patch.splitlines() if line.startswith("+") and
               "requires_grad=True" in line]
    assert [line.split("=")[0].strip("+ ") for line in changed] == ["w", "b"], first.patch
    assert "`w` (line 3) and `b` (line 4)" in first.fix.en
    assert "`w`（第 3 行）、`b`（第 4 行）" in first.fix.zh


def test_the_leaf_whose_grad_the_program_reads_is_tracked(sandbox: Any) -> None:
    first = verified_diagnosis(sandbox, WEIGHTS_BY_USE, {"no-grad-fn-no-leaf"}, 4,
                               "slopes = torch.zeros(3, requires_grad=True)")
    assert first.patch is not None and "inputs = torch.randn(8, 3, requires_grad" not in (
        first.patch)


def test_leaves_nothing_tells_apart_keep_the_first_one_met(sandbox: Any) -> None:
    first = verified_diagnosis(sandbox, NOTHING_TELLS, {"no-grad-fn-no-leaf"}, 3,
                               "requires_grad=True")
    assert first.patch is not None and first.patch.count("requires_grad=True") == 1

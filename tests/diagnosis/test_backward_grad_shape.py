"""A custom Function whose backward returns a gradient of another shape than its input: the
diagnosis names the value returned, the line that makes it and both shapes, proposes no
change (the right computation is the learner's) and does not call the cause uncertain."""

from __future__ import annotations

from typing import Any

from .runs import first_for_error

PROGRAM = """import torch

class RowSum(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.h, ctx.w = x.shape
        return x.sum(dim=1)

    @staticmethod
    def backward(ctx, grad_out):
        grad_x = grad_out.unsqueeze(0).expand(ctx.w, ctx.h)
        return grad_x

x = torch.randn(4, 4, requires_grad=True)
RowSum.apply(x).sum().backward()
y = torch.randn(3, 5, requires_grad=True)
RowSum.apply(y).sum().backward()
"""

def test_the_backward_line_that_makes_the_gradient_is_the_root(sandbox: Any) -> None:
    first = first_for_error(sandbox, PROGRAM)
    assert (first.id, first.root_line) == ("backward-grad-shape", 11)
    assert "(5, 3)" in first.title.en and "(3, 5)" in first.title.en and "`y`" not in \
        first.title.en and "`x`" in first.title.en
    assert first.tell_apart is None and not first.patch
    assert first.chain and all(step.zh for step in first.chain)

# expect: bool-ambiguous
# ruff: noqa  (a learner's program, mistakes included)
import torch

w = torch.randn(3, requires_grad=True)
loss = (w ** 2).sum()
loss.backward()
while w.grad > 1e-3:
    w = w - 0.1

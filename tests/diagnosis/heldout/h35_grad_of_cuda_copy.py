# expect: nonleaf-grad-warning
# ruff: noqa  (a learner's program, mistakes included)
import torch

base = torch.ones(3, requires_grad=True)
moved = base.to(torch.float64)
loss = (moved * 2).sum()
loss.backward()
print(moved.grad)

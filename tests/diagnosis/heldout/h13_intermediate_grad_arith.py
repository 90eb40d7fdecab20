# expect: grad-none-nonleaf
# ruff: noqa  (a learner's program, mistakes included)
import torch

a = torch.tensor([2.0, 3.0], requires_grad=True)
b = a.exp()
c = b.sum()
c.backward()
ratio = b.grad / a.grad

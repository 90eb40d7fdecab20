# expect: none
# ruff: noqa  (a learner's program, mistakes included)
import torch

x = torch.linspace(-1, 1, 5, requires_grad=True)
y = (x ** 3).sum()
(dx,) = torch.autograd.grad(y, x, create_graph=True)
(d2x,) = torch.autograd.grad(dx.sum(), x)
print(dx, d2x)

# expect: non-scalar-backward
# ruff: noqa  (a learner's program, mistakes included)
import torch

def f(t):
    return torch.sin(t) * t

points = torch.linspace(0, 3, 7, requires_grad=True)
values = f(points)
(slope,) = torch.autograd.grad(values, points)
print(slope)

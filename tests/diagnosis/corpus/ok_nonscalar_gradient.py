# expect: none
# ruff: noqa  (a learner's program, mistakes included)
import torch

x = torch.ones(3, requires_grad=True)
y = x * 2
y.backward(torch.ones_like(y))
print(x.grad)
h = x * 3
h.retain_grad()
h.sum().backward()
print(h.grad)

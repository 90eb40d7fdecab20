# expect: gradient-shape-mismatch
# ruff: noqa  (a learner's program, mistakes included)
import torch

a = torch.ones(2, 3, requires_grad=True)
b = a * 4 + 1
weights = torch.ones(3)
b.backward(gradient=weights)
print(a.grad)

# expect: non-scalar-backward
# ruff: noqa  (a learner's program, mistakes included)
import torch

x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x ** 2 + 3 * x
# I want dy/dx for every element
y.backward()
print("gradient:", x.grad)

# expect: generic
# ruff: noqa
import torch

x = torch.tensor([2.0, 3.0], requires_grad=True)
y = (x ** 3).sum()
y.backward()

gradient = x.grad
print("dy/dx =", gradeint)

# expect: no-grad-fn-no-leaf
# ruff: noqa  (a learner's program, mistakes included)
import torch

torch.manual_seed(1)
A = torch.randn(3, 3)
b = torch.randn(3)
solution = torch.randn(3)
residual = A @ solution - b
energy = residual.dot(residual)
energy.backward()

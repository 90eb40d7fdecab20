# expect: dtype-long-float
# ruff: noqa  (a learner's program, mistakes included)
import torch

x = torch.randn(2, 2)
kernel = torch.tensor([[1, 0], [0, 1]])
y = x @ kernel

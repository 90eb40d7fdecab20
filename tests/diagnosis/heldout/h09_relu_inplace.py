# expect: inplace-modified-output
# ruff: noqa  (a learner's program, mistakes included)
import torch

x = torch.randn(5, requires_grad=True)
y = torch.tanh(x)
y.relu_()
y.sum().backward()

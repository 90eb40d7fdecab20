# expect: inplace-modified-output
# ruff: noqa  (a learner's program, mistakes included)
import torch

x = torch.randn(3, requires_grad=True)
h = x.exp()
out = h * h
h += 1
out.sum().backward()

# expect: leaf-view-inplace
# ruff: noqa  (a learner's program, mistakes included)
import torch

bias = torch.randn(4, requires_grad=True)
bias[:2] = 0
out = (bias * 2).sum()

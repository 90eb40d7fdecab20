# expect: mm-shape-mismatch
# ruff: noqa  (a learner's program, mistakes included)
import torch

X = torch.randn(5, 3)
W = torch.randn(4, 3, requires_grad=True)
Y = torch.mm(X, W)
Y.sum().backward()

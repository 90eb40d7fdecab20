# expect: inplace-modified-output
# ruff: noqa  (a learner's program, mistakes included)
import torch

x = torch.randn(4, requires_grad=True)
gate = torch.sigmoid(x)
gate *= 2
total = gate.sum()
total.backward()

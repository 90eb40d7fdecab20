# expect: nonleaf-requires-grad
# ruff: noqa  (a learner's program, mistakes included)
import torch

w = torch.randn(3, requires_grad=True)
hidden = w * 2
hidden.requires_grad = False
print(hidden)

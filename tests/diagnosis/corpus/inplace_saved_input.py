# expect: inplace-modified-input
# ruff: noqa  (a learner's program, mistakes included)
import torch

scale = torch.tensor([1.0, 2.0, 3.0])
w = torch.ones(3, requires_grad=True)
out = (w * scale).sum()
scale.mul_(10)
out.backward()

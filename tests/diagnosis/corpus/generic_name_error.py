# expect: generic
# ruff: noqa  (a learner's program, mistakes included)
import torch

weights = torch.randn(3, requires_grad=True)
loss = (weigths ** 2).sum()
loss.backward()

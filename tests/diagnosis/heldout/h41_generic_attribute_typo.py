# expect: generic
# ruff: noqa  (a learner's program, mistakes included)
import torch

x = torch.ones(2, requires_grad=True)
y = (x * 2).summ()

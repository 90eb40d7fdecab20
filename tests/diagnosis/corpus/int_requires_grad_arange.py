# expect: int-requires-grad
# ruff: noqa  (a learner's program, mistakes included)
import torch

positions = torch.arange(10)
positions.requires_grad_()
energy = (positions ** 2).sum()

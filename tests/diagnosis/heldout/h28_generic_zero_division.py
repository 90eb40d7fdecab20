# expect: generic
# ruff: noqa  (a learner's program, mistakes included)
import torch

losses = []
w = torch.tensor(1.0, requires_grad=True)
average = sum(losses) / len(losses)

# expect: int-requires-grad
# ruff: noqa  (a learner's program, mistakes included)
import torch

w = torch.zeros(3, dtype=torch.long, requires_grad=True)

# expect: broadcast-mismatch
# ruff: noqa  (a learner's program, mistakes included)
import torch

prices = torch.tensor([10.0, 12.0, 9.0])
discounts = torch.tensor([0.1, 0.2, 0.0, 0.3])
final = prices * (1 - discounts)

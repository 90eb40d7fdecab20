# expect: dtype-long-float
# ruff: noqa  (a learner's program, mistakes included)
import torch
import torch.nn as nn

scorer = nn.Sequential(nn.Linear(2, 4), nn.ReLU(), nn.Linear(4, 1))
pairs = torch.tensor([[1, 2], [3, 4], [5, 6]])
print(scorer(pairs))

# expect: linear-in-features
# ruff: noqa  (a learner's program, mistakes included)
import torch
from torch import nn

mlp = nn.Sequential(
    nn.Linear(10, 32),
    nn.ReLU(),
    nn.Linear(32, 1),
)
batch = torch.randn(16, 12)
scores = mlp(batch)

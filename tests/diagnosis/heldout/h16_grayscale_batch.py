# expect: conv-input-rank
# ruff: noqa  (a learner's program, mistakes included)
import torch
from torch import nn

features = nn.Sequential(nn.Conv2d(1, 6, 5), nn.ReLU())
batch = torch.rand(8, 1, 1, 32, 32)
maps = features(batch)

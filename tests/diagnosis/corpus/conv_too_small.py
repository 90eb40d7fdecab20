# expect: conv-kernel-too-big
# ruff: noqa  (a learner's program, mistakes included)
import torch
import torch.nn as nn

stack = nn.Sequential(nn.Conv2d(1, 2, 5), nn.MaxPool2d(2), nn.Conv2d(2, 2, 5))
thumbnails = torch.rand(1, 1, 12, 12)
stack(thumbnails)

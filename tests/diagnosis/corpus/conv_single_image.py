# expect: conv-input-rank
# ruff: noqa  (a learner's program, mistakes included)
import torch
import torch.nn as nn

conv = nn.Conv2d(1, 4, 3)
image = torch.rand(28, 28)
feature_map = conv(image)

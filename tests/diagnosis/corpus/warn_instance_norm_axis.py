# expect: instance-norm-axis
# ruff: noqa  (a learner's program, mistakes included)
import torch
import torch.nn as nn

features = torch.randn(2, 30, 8)  # (batch, time, features) from a recurrent encoder
norm = nn.InstanceNorm1d(8)
print(norm(features).mean(dim=1)[0])

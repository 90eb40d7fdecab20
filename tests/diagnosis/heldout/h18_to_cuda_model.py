# expect: cuda-not-available
# ruff: noqa  (a learner's program, mistakes included)
import torch
import torch.nn as nn

net = nn.Linear(3, 3)
net = net.to("cuda")

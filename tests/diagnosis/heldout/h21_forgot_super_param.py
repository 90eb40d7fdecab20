# expect: module-init-not-called
# ruff: noqa  (a learner's program, mistakes included)
import torch
import torch.nn as nn

class Scale(nn.Module):
    def __init__(self):
        self.factor = nn.Parameter(torch.ones(1))

    def forward(self, x):
        return x * self.factor

Scale()

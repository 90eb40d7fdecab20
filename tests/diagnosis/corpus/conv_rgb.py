# expect: conv-channels
# ruff: noqa  (a learner's program, mistakes included)
import torch
import torch.nn as nn

class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 8, 3)

    def forward(self, x):
        return self.conv(x).mean()

photos = torch.rand(2, 3, 16, 16)
Tiny()(photos)

# expect: module-init-not-called
# ruff: noqa  (a learner's program, mistakes included)
import torch.nn as nn

class Block(nn.Module):
    def __init__(self, width):
        self.width = width
        self.layers = nn.Sequential(nn.Linear(width, width), nn.ReLU())

block = Block(8)

# expect: module-init-not-called
# ruff: noqa  (a learner's program, mistakes included)
import torch.nn as nn

class Regressor(nn.Module):
    def __init__(self, n):
        self.hidden = nn.Linear(n, 16)
        self.out = nn.Linear(16, 1)

    def forward(self, x):
        return self.out(self.hidden(x).relu())

model = Regressor(4)

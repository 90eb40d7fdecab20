# expect: module-init-not-called
# ruff: noqa
import torch
import torch.nn as nn


class Regressor(nn.Module):
    def __init__(self, n_in, n_hidden):
        self.hidden = nn.Linear(n_in, n_hidden)
        self.out = nn.Linear(n_hidden, 1)

    def forward(self, x):
        return self.out(torch.relu(self.hidden(x)))


reg = Regressor(3, 10)
x = torch.randn(4, 3)
print(reg(x))

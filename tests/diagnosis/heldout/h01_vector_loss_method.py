# expect: non-scalar-backward
# ruff: noqa  (a learner's program, mistakes included)
import torch

class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(2, 1)

    def forward(self, x):
        return self.lin(x)

m = Model()
x = torch.randn(6, 2)
target = torch.randn(6, 1)
residuals = (m(x) - target) ** 2
residuals.backward()

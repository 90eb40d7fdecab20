# expect: dtype-double-float
# ruff: noqa  (a learner's program, mistakes included)
import numpy as np
import torch

X = torch.tensor(np.linspace(0, 1, 12).reshape(4, 3))
layer = torch.nn.Linear(3, 2)
hidden = layer(X)

# expect: numpy-requires-grad
# ruff: noqa  (a learner's program, mistakes included)
import numpy as np
import torch

params = torch.randn(2, requires_grad=True)
grid = torch.linspace(0, 1, 4)
values = params[0] * grid + params[1]
table = np.asarray(values.numpy())

# expect: dtype-double-float
# ruff: noqa  (a learner's program, mistakes included)
import numpy as np
import torch
import torch.nn as nn

data = np.random.rand(6, 4)
inputs = torch.from_numpy(data)
regressor = nn.Linear(4, 1)
out = regressor(inputs)

# expect: dtype-double-float-operands
# ruff: noqa  (a learner's program, mistakes included)
import numpy as np
import torch

w = torch.randn(3, 2)
features = torch.from_numpy(np.ones((2, 4)))
out = w @ features

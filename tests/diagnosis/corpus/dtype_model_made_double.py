# expect: dtype-float-double-layer
# ruff: noqa  (a learner's program, mistakes included)
# The layer is float64 and the data float32: the reverse of dtype-double-float.
import torch
import torch.nn as nn

net = nn.Linear(3, 1).double()
x = torch.randn(5, 3)
y = net(x)

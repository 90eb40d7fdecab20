# expect: dtype-double-float-operands
# ruff: noqa  (a learner's program, mistakes included)
# Two plain tensors, no layer: the diagnosis names both operands, not "the layer's weights".
import torch

a = torch.ones(2, 2, dtype=torch.float64)
b = torch.ones(2, 2)
c = torch.mm(a, b)

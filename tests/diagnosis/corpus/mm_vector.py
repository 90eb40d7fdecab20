# expect: mm-needs-matrix
# ruff: noqa  (a learner's program, mistakes included)
import torch

row = torch.tensor([1.0, 2.0])
M = torch.eye(2, requires_grad=True)
out = torch.mm(row, M)

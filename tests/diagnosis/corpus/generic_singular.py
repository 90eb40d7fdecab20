# expect: generic
# ruff: noqa  (a learner's program, mistakes included)
import torch

A = torch.tensor([[1.0, 2.0], [2.0, 4.0]], requires_grad=True)
A_inv = torch.linalg.inv(A)
A_inv.sum().backward()

# expect: leaf-inplace
# ruff: noqa  (a learner's program, mistakes included)
import torch

counts = torch.zeros(4, requires_grad=True)
increments = torch.tensor([1.0, 0.0, 2.0, 1.0])
counts.add_(increments)
print(counts)

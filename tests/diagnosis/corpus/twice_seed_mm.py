# expect: backward-twice
# ruff: noqa  (a learner's program, mistakes included)
import torch

x = torch.tensor([[1.0, 2.0]], requires_grad=True)
m = torch.tensor([[1.0, 0.0], [1.0, 1.0]], requires_grad=True)
z = torch.mm(x, m).sum()
z.backward()
print(x.grad)
z.backward()
print(x.grad)

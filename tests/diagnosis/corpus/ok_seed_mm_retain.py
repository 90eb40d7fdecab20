# expect: none
# ruff: noqa  (a learner's program, mistakes included)
import torch

x = torch.tensor([[1.0, 2.0]], requires_grad=True)
y = torch.tensor([[1.0, 0.0], [1.0, 1.0]], requires_grad=True)
z = torch.mm(x, y).sum()
z.backward(retain_graph=True)
print(x.grad, y.grad)
z.backward()
print(x.grad)

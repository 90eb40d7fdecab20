# expect: leaf-inplace-update
# ruff: noqa  (a learner's program, mistakes included)
import torch

weights = torch.randn(4, requires_grad=True)
inputs = torch.randn(10, 4)
labels = torch.randn(10)
for it in range(5):
    pred = inputs @ weights
    cost = ((pred - labels) ** 2).mean()
    cost.backward()
    weights.add_(-0.01 * weights.grad)
    weights.grad = None

# expect: leaf-inplace-update
# ruff: noqa  (a learner's program, mistakes included)
import torch

w = torch.tensor([2.0, -1.0], requires_grad=True)
x = torch.tensor([[1.0, 1.0], [2.0, 0.5]])
target = torch.tensor([1.0, 0.0])
lr = 0.05
for _ in range(10):
    loss = ((x @ w - target) ** 2).mean()
    loss.backward()
    w -= lr * w.grad
    w.grad.zero_()

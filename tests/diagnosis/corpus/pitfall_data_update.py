# expect: data-attribute
# ruff: noqa  (a learner's program, mistakes included)
import torch

w = torch.randn(2, requires_grad=True)
x = torch.tensor([1.0, -1.0])
loss = (w * x).sum() ** 2
loss.backward()
w.data = w.data - 0.1 * w.grad
print(w)

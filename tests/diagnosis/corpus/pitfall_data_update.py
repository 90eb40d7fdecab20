# expect: data-attribute
# ruff: noqa  (a learner's program, mistakes included)
# w changed through .data between the forward pass and its backward(): autograd does not see
# it, and the gradient is that of the old w (a .data update after backward() is no pitfall)
import torch

w = torch.randn(2, requires_grad=True)
x = torch.tensor([1.0, -1.0])
loss = (w * x).sum() ** 2
w.data = w.data - 0.1
loss.backward()
print(w.grad)

# expect: requires-grad-too-late
# ruff: noqa  (a learner's program, mistakes included)
import torch

x = torch.tensor([1.0, 2.0])
w = torch.tensor([0.5, 0.5], requires_grad=True)
scaled = x * 10
x.requires_grad_()
total = (scaled * w).sum()
total.backward()
print(x.grad)

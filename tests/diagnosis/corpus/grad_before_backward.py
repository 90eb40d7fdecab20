# expect: grad-none
# ruff: noqa  (a learner's program, mistakes included)
import torch

w = torch.ones(3, requires_grad=True)
loss = (w * torch.arange(3.0)).sum()
w.grad.zero_()
loss.backward()

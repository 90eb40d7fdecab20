# expect: backward-twice
# ruff: noqa  (a learner's program, mistakes included)
import torch

w = torch.randn(4, requires_grad=True)
hidden = torch.tanh(w * 2)
loss_a = hidden.sum()
loss_b = (hidden ** 2).mean()
loss_a.backward()
loss_b.backward()

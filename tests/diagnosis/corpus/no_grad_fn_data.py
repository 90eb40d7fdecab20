# expect: no-grad-fn
# ruff: noqa  (a learner's program, mistakes included)
import torch

w = torch.randn(3, requires_grad=True)
x = torch.ones(3)
loss = (w.data * x).sum()
loss.backward()

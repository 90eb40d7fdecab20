# expect: grad-none-no-requires-grad
# ruff: noqa  (a learner's program, mistakes included)
import torch

bias = torch.zeros(2)
x = torch.ones(2, requires_grad=True)
loss = (x + bias).pow(2).sum()
loss.backward()
step = bias.grad * 0.1

# expect: leaf-inplace-update
# ruff: noqa  (a learner's program, mistakes included)
import torch

bias = torch.zeros(1, requires_grad=True)
slope = torch.ones(1, requires_grad=True)
xs = torch.arange(5.0)
ys = 3 * xs + 1
err = (slope * xs + bias - ys).pow(2).mean()
err.backward()
slope.sub_(0.01 * slope.grad)
bias.sub_(0.01 * bias.grad)

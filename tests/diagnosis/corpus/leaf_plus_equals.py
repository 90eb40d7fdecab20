# expect: leaf-inplace
# ruff: noqa  (a learner's program, mistakes included)
import torch

theta = torch.tensor([0.1, 0.2], requires_grad=True)
noise = torch.randn(2) * 0.01
theta += noise
loss = theta.pow(2).sum()
loss.backward()

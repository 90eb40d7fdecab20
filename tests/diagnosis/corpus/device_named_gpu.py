# expect: unknown-device-string
# ruff: noqa  (a learner's program, mistakes included)
import torch

device = "gpu"
weights = torch.randn(4, 2, requires_grad=True)
batch = torch.randn(8, 4).to(device)
print((batch @ weights).shape)

# expect: numpy-requires-grad
# ruff: noqa
import numpy as np
import torch

torch.manual_seed(42)
W = torch.randn(8, 8, requires_grad=True)
b = torch.zeros(8, requires_grad=True)

x = torch.randn(3, 8)
h = torch.relu(x @ W + b)
h.sum().backward()

counts, edges = np.histogram(W.numpy(), bins=5)
print("weight histogram:", counts)
print("grad mean:", W.grad.mean().item())

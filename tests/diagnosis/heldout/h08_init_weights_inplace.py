# expect: leaf-inplace
# ruff: noqa  (a learner's program, mistakes included)
import torch

kernel = torch.empty(3, 3, requires_grad=True)
kernel.uniform_(-0.1, 0.1)
print(kernel)

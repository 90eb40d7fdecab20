# expect: grad-none-nonleaf
# ruff: noqa  (a learner's program, mistakes included)
import torch

x = torch.tensor([1.0, 2.0], requires_grad=True)
h = x * 3
out = h.sum()
out.backward()
print(h.grad.norm())

# expect: item-multi-element
# ruff: noqa  (a learner's program, mistakes included)
import torch

w = torch.randn(3, requires_grad=True)
loss = (w - 1) ** 2
print("loss is", loss.item())

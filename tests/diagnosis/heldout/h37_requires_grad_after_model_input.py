# expect: requires-grad-too-late
# ruff: noqa  (a learner's program, mistakes included)
import torch

image = torch.rand(1, 4)
w = torch.randn(4, 1, requires_grad=True)
score = image @ w
image.requires_grad = True
score.sum().backward()
saliency = image.grad
print(saliency)

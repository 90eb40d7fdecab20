# expect: generic
# ruff: noqa  (a learner's program, mistakes included)
import torch

images = torch.randn(4, 3, 8, 8)
n, c, h = images.shape

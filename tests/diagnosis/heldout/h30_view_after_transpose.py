# expect: view-not-contiguous
# ruff: noqa  (a learner's program, mistakes included)
import torch

seq = torch.randn(2, 5, 8)
swapped = seq.transpose(0, 1)
flat = swapped.view(10, 8)

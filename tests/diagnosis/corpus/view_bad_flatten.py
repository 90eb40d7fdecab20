# expect: view-invalid-shape
# ruff: noqa  (a learner's program, mistakes included)
import torch

batch = torch.randn(4, 16, 5, 5)
flat = batch.view(4, 16 * 4 * 4)

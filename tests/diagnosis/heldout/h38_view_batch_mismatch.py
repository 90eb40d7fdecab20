# expect: view-invalid-shape
# ruff: noqa  (a learner's program, mistakes included)
import torch

feature_maps = torch.randn(8, 6, 14, 14)
flat = feature_maps.view(-1, 16 * 5 * 5)
print(flat.shape)

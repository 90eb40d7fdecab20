# expect: mm-shape-mismatch
# ruff: noqa  (a learner's program, mistakes included)
import torch

queries = torch.randn(2, 8)
keys = torch.randn(2, 8)
attention = queries @ keys
print(attention)

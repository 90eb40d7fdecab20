# expect: leaf-view-inplace
# ruff: noqa  (a learner's program, mistakes included)
import torch

embedding = torch.randn(5, 2, requires_grad=True)
padding_idx = 0
embedding[padding_idx] = 0.0
print(embedding.sum())

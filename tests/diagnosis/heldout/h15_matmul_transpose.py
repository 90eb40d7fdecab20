# expect: mm-shape-mismatch
# ruff: noqa  (a learner's program, mistakes included)
import torch

embeddings = torch.randn(10, 16)
centroids = torch.randn(4, 16, requires_grad=True)
similarity = torch.matmul(embeddings, centroids)

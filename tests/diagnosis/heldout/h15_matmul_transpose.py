# expect: mm-shape-mismatch
import torch

embeddings = torch.randn(10, 16)
centroids = torch.randn(4, 16, requires_grad=True)
similarity = torch.matmul(embeddings, centroids)

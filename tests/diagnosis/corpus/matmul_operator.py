# expect: mm-shape-mismatch
import torch

queries = torch.randn(2, 8)
keys = torch.randn(2, 8)
attention = queries @ keys
print(attention)

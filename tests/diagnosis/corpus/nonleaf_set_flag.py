# expect: nonleaf-requires-grad
import torch

w = torch.randn(3, requires_grad=True)
hidden = w * 2
hidden.requires_grad = False
print(hidden)

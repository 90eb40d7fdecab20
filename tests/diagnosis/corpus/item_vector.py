# expect: item-multi-element
import torch

w = torch.randn(3, requires_grad=True)
loss = (w - 1) ** 2
print("loss is", loss.item())

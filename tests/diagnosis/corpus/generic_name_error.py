# expect: generic
import torch

weights = torch.randn(3, requires_grad=True)
loss = (weigths ** 2).sum()
loss.backward()

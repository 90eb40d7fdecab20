import torch

x = torch.ones(1, 2, requires_grad=True)
z = x + 2
z.sum().backward()

# expect: int-requires-grad
import torch

positions = torch.arange(10)
positions.requires_grad_()
energy = (positions ** 2).sum()

# expect: generic
import torch

images = torch.randn(4, 3, 8, 8)
n, c, h = images.shape

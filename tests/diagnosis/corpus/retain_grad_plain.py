# expect: retain-grad-no-requires-grad
import torch

inp = torch.randn(3)
mid = inp * 3
mid.retain_grad()

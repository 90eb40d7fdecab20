# expect: int-requires-grad
import torch

w = torch.zeros(3, dtype=torch.long, requires_grad=True)

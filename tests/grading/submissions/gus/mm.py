import torch

x = torch.tensor([2., 1.], requires_grad=True)
junk = torch.ones(1 << 34)  # 64 GiB

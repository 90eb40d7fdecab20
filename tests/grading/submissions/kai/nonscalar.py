import torch

x = torch.ones(2, requires_grad=True)
z = x + 2
z.sum().backward()
raise SystemExit(0)

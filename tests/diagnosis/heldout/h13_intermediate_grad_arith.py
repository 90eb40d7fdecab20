# expect: grad-none-nonleaf
import torch

a = torch.tensor([2.0, 3.0], requires_grad=True)
b = a.exp()
c = b.sum()
c.backward()
ratio = b.grad / a.grad

# expect: grad-none
import torch

w = torch.ones(3, requires_grad=True)
loss = (w * torch.arange(3.0)).sum()
w.grad.zero_()
loss.backward()

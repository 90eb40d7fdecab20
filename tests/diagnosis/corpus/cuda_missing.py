# expect: cuda-not-available
import torch

w = torch.randn(3, requires_grad=True)
w_gpu = w.cuda()
print((w_gpu * 2).sum())

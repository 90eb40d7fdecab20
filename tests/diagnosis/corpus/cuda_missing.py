# expect: cuda-not-available
# ruff: noqa  (a learner's program, mistakes included)
import torch

w = torch.randn(3, requires_grad=True)
w_gpu = w.cuda()
print((w_gpu * 2).sum())

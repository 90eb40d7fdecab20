# expect: optimizer-params-tensor
# ruff: noqa  (a learner's program, mistakes included)
import torch

w = torch.zeros(3, requires_grad=True)
opt = torch.optim.SGD(w, lr=0.1)

# expect: no-grad-fn-detached
# ruff: noqa  (a learner's program, mistakes included)
import torch

W = torch.randn(3, 2, requires_grad=True)
frozen_copy = W.clone().detach()
x = torch.ones(4, 3)
out = x @ frozen_copy
out.pow(2).mean().backward()

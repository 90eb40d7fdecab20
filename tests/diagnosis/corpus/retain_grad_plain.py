# expect: retain-grad-no-requires-grad
# ruff: noqa  (a learner's program, mistakes included)
import torch

inp = torch.randn(3)
mid = inp * 3
mid.retain_grad()

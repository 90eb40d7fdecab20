# expect: input-eof
# ruff: noqa  (a learner's program, mistakes included)
import torch

steps = int(input("how many steps? "))
x = torch.ones(steps, requires_grad=True)

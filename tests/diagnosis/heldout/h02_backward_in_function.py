# expect: backward-twice
# ruff: noqa  (a learner's program, mistakes included)
import torch

def step(loss):
    loss.backward()

p = torch.tensor([0.5, 1.5], requires_grad=True)
obj = (p.exp() * p).sum()
step(obj)
step(obj)

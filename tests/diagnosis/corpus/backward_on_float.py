# expect: backward-on-python-number
# ruff: noqa  (a learner's program, mistakes included)
import torch

w = torch.tensor([1.0, 2.0], requires_grad=True)
running = (w ** 2).sum().item()
print("loss", running)
running.backward()

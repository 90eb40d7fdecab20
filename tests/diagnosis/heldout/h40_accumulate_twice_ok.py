# expect: none
# ruff: noqa  (a learner's program, mistakes included)
import torch

a = torch.tensor([1.0, 2.0], requires_grad=True)
first = (a * 3).sum()
second = (a ** 2).sum()
first.backward()
second.backward()
print(a.grad)

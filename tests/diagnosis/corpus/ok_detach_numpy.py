# expect: none
# ruff: noqa  (a learner's program, mistakes included)
import torch

w = torch.tensor([0.3, 0.7], requires_grad=True)
curve = (w * torch.tensor([2.0, 3.0])).cumsum(0)
print(curve.detach().numpy())
curve.sum().backward()
print(w.grad)

# expect: ce-target-float-shape
# ruff: noqa  (a learner's program, mistakes included)
import torch
import torch.nn.functional as F

logits = torch.randn(4, 3, requires_grad=True)
target = torch.tensor([0., 1., 2., 1.])
loss = F.cross_entropy(logits, target.view(4, 1))
loss.backward()

# expect: ce-target-out-of-bounds
# ruff: noqa  (a learner's program, mistakes included)
import torch
import torch.nn.functional as F

logits = torch.randn(4, 3, requires_grad=True)
classes = torch.tensor([1, 2, 3, 1])
loss = F.cross_entropy(logits, classes)

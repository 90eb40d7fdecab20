# expect: ce-target-shape
# ruff: noqa  (a learner's program, mistakes included)
import torch
import torch.nn.functional as F

scores = torch.randn(3, 5, requires_grad=True)
y = torch.tensor([[1], [4], [0]])
loss = F.cross_entropy(scores, y)

# expect: softmax-implicit-dim
# ruff: noqa  (a learner's program, mistakes included)
import torch
import torch.nn.functional as F

logits = torch.randn(2, 3)
probs = F.softmax(logits)
print(probs.sum())

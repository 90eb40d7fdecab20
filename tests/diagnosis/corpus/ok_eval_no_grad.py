# expect: none
# ruff: noqa  (a learner's program, mistakes included)
import torch
import torch.nn as nn

clf = nn.Sequential(nn.Linear(4, 3))
batch = torch.randn(5, 4)
with torch.no_grad():
    probs = clf(batch).softmax(dim=1)
print(probs.requires_grad, probs.argmax(dim=1))

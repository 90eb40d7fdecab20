# expect: ce-target-dtype
# ruff: noqa  (a learner's program, mistakes included)
import torch
import torch.nn as nn

criterion = nn.CrossEntropyLoss()
logits = torch.randn(4, 3, requires_grad=True)
labels = torch.tensor([0.0, 2.0, 1.0, 1.0])
loss = criterion(logits, labels)
loss.backward()

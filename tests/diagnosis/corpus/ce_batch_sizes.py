# expect: ce-batch-mismatch
# ruff: noqa  (a learner's program, mistakes included)
import torch
import torch.nn as nn

head = nn.Linear(6, 3)
batch = torch.randn(8, 6)
targets = torch.randint(0, 3, (6,))
loss_fn = nn.CrossEntropyLoss()
loss = loss_fn(head(batch), targets)

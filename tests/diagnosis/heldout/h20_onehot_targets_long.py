# expect: ce-probabilities-long
# ruff: noqa  (a learner's program, mistakes included)
import torch
import torch.nn as nn

scores = torch.randn(4, 3, requires_grad=True)
labels = torch.tensor([0, 2, 1, 2])
one_hot = nn.functional.one_hot(labels, num_classes=3)
loss = nn.CrossEntropyLoss()(scores, one_hot)

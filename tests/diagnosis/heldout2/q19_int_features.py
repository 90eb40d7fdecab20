# expect: dtype-long-float
# ruff: noqa
import torch
import torch.nn as nn

# dice rolls -> predict whether the sum is large
rolls = torch.tensor([[1, 6], [3, 4], [6, 6], [2, 1]])
big = torch.tensor([[0.0], [1.0], [1.0], [0.0]])

clf = nn.Sequential(nn.Linear(2, 4), nn.ReLU(), nn.Linear(4, 1))
logit = clf(rolls)
loss = nn.BCEWithLogitsLoss()(logit, big)
loss.backward()
print(loss.item())

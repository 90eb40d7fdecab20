# expect: loss-target-broadcast
# ruff: noqa  (a learner's program, mistakes included)
import torch
import torch.nn as nn

model = nn.Linear(2, 1)
x = torch.randn(10, 2)
y = torch.randn(10)
loss = nn.functional.mse_loss(model(x), y)
loss.backward()

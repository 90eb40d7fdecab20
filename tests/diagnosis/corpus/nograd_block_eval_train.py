# expect: no-grad-fn-no-grad-block
# ruff: noqa  (a learner's program, mistakes included)
import torch
import torch.nn as nn

model = nn.Linear(3, 1)
x = torch.randn(8, 3)
y = torch.randn(8, 1)

with torch.no_grad():
    pred = model(x)
error = pred - y
cost = (error * error).mean()
cost.backward()

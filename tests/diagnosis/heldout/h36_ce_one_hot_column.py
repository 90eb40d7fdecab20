# expect: ce-target-shape
# ruff: noqa  (a learner's program, mistakes included)
import torch
import torch.nn as nn

model = nn.Linear(5, 3)
inputs = torch.randn(6, 5)
classes = torch.randint(0, 3, (6, 1))
loss = nn.CrossEntropyLoss()(model(inputs), classes)
loss.backward()

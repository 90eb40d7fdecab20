# expect: numpy-requires-grad
# ruff: noqa  (a learner's program, mistakes included)
import torch
import torch.nn as nn

layer = nn.Linear(2, 2)
weights = layer.weight.numpy()
print(weights.shape)

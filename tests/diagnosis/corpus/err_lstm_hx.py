# expect: lstm-hidden-not-tuple
# ruff: noqa  (a learner's program, mistakes included)
import torch
import torch.nn as nn

cell = nn.LSTMCell(4, 8)
h = torch.zeros(2, 8)
for t in range(3):
    h = cell(torch.randn(2, 4), h)
print(h.shape)

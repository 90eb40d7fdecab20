# expect: dtype-long-float
# ruff: noqa  (a learner's program, mistakes included)
import torch
import torch.nn as nn

model = nn.Linear(3, 1)
rooms = torch.tensor([[3, 120, 1990], [2, 80, 2005]])
price = model(rooms)

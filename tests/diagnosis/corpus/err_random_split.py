# expect: random-split-lengths
# ruff: noqa  (a learner's program, mistakes included)
import torch
from torch.utils.data import TensorDataset, random_split

data = TensorDataset(torch.randn(101, 3))
train, val = random_split(data, [int(0.8 * len(data)), int(0.2 * len(data))])
print(len(train), len(val))

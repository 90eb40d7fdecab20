# expect: numpy-requires-grad
import torch
import torch.nn as nn

layer = nn.Linear(2, 2)
weights = layer.weight.numpy()
print(weights.shape)

# expect: rnn-dropout-one-layer
# ruff: noqa  (a learner's program, mistakes included)
import torch
import torch.nn as nn

encoder = nn.GRU(8, 16, num_layers=1, dropout=0.3, batch_first=True)
seq = torch.randn(2, 5, 8)
encoder.train()
first, _ = encoder(seq)
second, _ = encoder(seq)
print("two training passes differ by", (first - second).abs().max().item())

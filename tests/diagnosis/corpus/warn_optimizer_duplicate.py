# expect: optimizer-duplicate-params
# ruff: noqa  (a learner's program, mistakes included)
import torch
import torch.nn as nn

encoder = nn.Linear(4, 8)
head = nn.Linear(8, 1)
shared = list(encoder.parameters()) + list(head.parameters())
opt = torch.optim.SGD(shared + list(encoder.parameters()), lr=0.1)
x = torch.randn(16, 4)
loss = head(encoder(x)).pow(2).mean()
loss.backward()
opt.step()
print(loss.item())

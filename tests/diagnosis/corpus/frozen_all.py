# expect: no-grad-fn-frozen
# ruff: noqa  (a learner's program, mistakes included)
import torch
import torch.nn as nn

net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
for p in net.parameters():
    p.requires_grad = False

batch = torch.randn(5, 4)
loss = net(batch).pow(2).mean()
loss.backward()

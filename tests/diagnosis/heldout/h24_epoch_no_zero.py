# expect: missing-zero-grad
# ruff: noqa  (a learner's program, mistakes included)
import torch
from torch import nn, optim

net = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 1))
sgd = optim.SGD(net.parameters(), lr=0.05)
data = torch.randn(16, 4)
labels = torch.randn(16, 1)
for epoch in range(3):
    for i in range(0, 16, 4):
        xb, yb = data[i:i + 4], labels[i:i + 4]
        out = net(xb)
        l = nn.functional.mse_loss(out, yb)
        l.backward()
        sgd.step()

# expect: backward-twice-loop
# ruff: noqa  (a learner's program, mistakes included)
# The loss is rebuilt inside the loop, but part of its graph (the trunk's output) was built
# once before it: the second pass goes back through the freed part.
import torch
import torch.nn as nn

trunk = nn.Sequential(nn.Linear(8, 16), nn.Tanh())
heads = [nn.Linear(16, 1) for _ in range(3)]
inputs = torch.randn(20, 8)
targets = torch.randn(20, 1)

shared = trunk(inputs)
hidden = shared * 0.5

for i, head in enumerate(heads):
    opt = torch.optim.SGD(list(trunk.parameters()) + list(head.parameters()), lr=0.01)
    opt.zero_grad()
    pred = head(hidden)
    err = ((pred - targets) ** 2).mean()
    err.backward()
    opt.step()
    print(i, err.item())

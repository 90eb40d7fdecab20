# expect: none
# ruff: noqa  (a learner's program, mistakes included)
import torch

online = torch.nn.Linear(3, 3)
target_net = torch.nn.Linear(3, 3)
x = torch.randn(5, 3)
with torch.no_grad():
    target = target_net(x)
loss = ((online(x) - target.detach()) ** 2).mean()
online.zero_grad()
loss.backward()
print(online.weight.grad.shape)

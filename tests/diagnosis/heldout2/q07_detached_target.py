# expect: no-grad-fn-detached
# ruff: noqa
import torch
import torch.nn as nn

net = nn.Linear(6, 1)
x = torch.randn(12, 6)
y = torch.randn(12, 1)

out = net(x)
# keep a copy for logging on the cpu
out_log = out.detach()
print("mean prediction", out_log.mean().item())

loss = ((out_log - y) ** 2).mean()
loss.backward()
print(net.weight.grad)

# expect: generic
# ruff: noqa
import torch
import torch.nn as nn

net = nn.Sequential(nn.Linear(8, 4), nn.ReLU(), nn.Linear(4, 1))
state = torch.load("checkpoints/best_model_epoch12.pt")
net.load_state_dict(state)

x = torch.randn(2, 8)
with torch.no_grad():
    print(net(x))

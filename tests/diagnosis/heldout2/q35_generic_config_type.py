# expect: generic
# ruff: noqa
import torch
import torch.nn as nn

config = {"hidden": "32", "lr": 0.01, "epochs": 2}

layer_sizes = [4] + [config["hidden"]] * 2 + [1]
print("sizes:", layer_sizes)
total_units = sum(layer_sizes)
print("units:", total_units)

net = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 1))
opt = torch.optim.SGD(net.parameters(), lr=config["lr"])
print(net)

# expect: generic
import torch

config = {"lr": 0.1, "epochs": 3}
w = torch.zeros(2, requires_grad=True)
momentum = config["momentum"]

# expect: generic
# ruff: noqa  (a learner's program, mistakes included)
import torch

config = {"lr": 0.1, "epochs": 3}
w = torch.zeros(2, requires_grad=True)
momentum = config["momentum"]

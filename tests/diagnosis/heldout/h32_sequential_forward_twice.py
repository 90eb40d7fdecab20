# expect: backward-twice
# ruff: noqa  (a learner's program, mistakes included)
import torch
import torch.nn as nn

encoder = nn.Sequential(nn.Linear(4, 4), nn.Sigmoid())
x = torch.randn(3, 4)
z = encoder(x)
recon_loss = (z - x).pow(2).mean()
reg_loss = z.abs().mean()
recon_loss.backward()
reg_loss.backward()

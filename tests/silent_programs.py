"""Small programs that run and train, shared by the tests of the diagnosis and of the chat."""

UNTRAINED_PART = """import torch
import torch.nn as nn
torch.manual_seed(0)
enc, head = nn.Linear(4, 3), nn.Linear(3, 1)
opt = torch.optim.SGD(head.parameters(), lr=0.1)
x, y = torch.randn(16, 4), torch.randn(16, 1)
for step in range(20):
    loss = ((head(enc(x).detach()) - y) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""
"""An encoder detached and in no optimizer: perhaps meant, so no check calls it a mistake;
what the run shows says it never trains."""

# expect: generic
# ruff: noqa  (a learner's program, mistakes included)
import torch

history = []
w = torch.tensor(1.0, requires_grad=True)
for epoch in range(3):
    loss = (w - 2) ** 2
    history.append(loss.item())
print(history[3])

# expect: generic
# ruff: noqa
import torch
import torch.nn as nn

model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
X, y = torch.randn(16, 3), torch.randn(16, 1)
metrics = {"train_loss": [], "grad_norm": []}

for step in range(3):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(X), y)
    loss.backward()
    metrics["train_loss"].append(loss.item())
    metrics["grad_norm"].append(model.weight.grad.norm().item())
    opt.step()

print("final val loss:", metrics["val_loss"][-1])

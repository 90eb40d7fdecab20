# expect: numpy-requires-grad
# ruff: noqa
import numpy as np
import torch
import torch.nn as nn

model = nn.Linear(1, 1)
xs = torch.linspace(0, 1, 11).reshape(-1, 1)
ys_true = 4 * xs + 2

optim = torch.optim.SGD(model.parameters(), lr=0.5)
for _ in range(50):
    optim.zero_grad()
    loss = ((model(xs) - ys_true) ** 2).mean()
    loss.backward()
    optim.step()

preds = model(xs)
arr = preds.numpy()
print("max error:", np.abs(arr - ys_true.numpy()).max())

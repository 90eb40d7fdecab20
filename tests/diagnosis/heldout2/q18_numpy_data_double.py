# expect: dtype-double-float
# ruff: noqa
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(0)
X_np = rng.normal(size=(40, 3))
y_np = (X_np @ np.array([1.0, -1.0, 2.0]))[:, None]

X = torch.from_numpy(X_np)
y = torch.from_numpy(y_np)

lin = nn.Linear(3, 1)
opt = torch.optim.SGD(lin.parameters(), lr=0.01)
opt.zero_grad()
loss = nn.functional.mse_loss(lin(X), y)
loss.backward()
opt.step()
print(loss.item())

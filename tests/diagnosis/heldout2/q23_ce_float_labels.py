# expect: ce-target-dtype
# ruff: noqa
import numpy as np
import torch
import torch.nn as nn

labels_np = np.array([0, 1, 2, 1, 0, 2], dtype=np.float32)
feats = torch.randn(6, 4)
targets = torch.from_numpy(labels_np)

model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3))
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters())

optimizer.zero_grad()
loss = criterion(model(feats), targets)
loss.backward()
optimizer.step()
print(loss.item())

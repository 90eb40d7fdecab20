# expect: none
# ruff: noqa
import torch
import torch.nn as nn

torch.manual_seed(1)
model = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
loss_fn = nn.MSELoss()

X = torch.rand(64, 2)
y = (X[:, 0] * X[:, 1]).unsqueeze(1)

for epoch in range(20):
    optimizer.zero_grad()
    pred = model(X)
    loss = loss_fn(pred, y)
    loss.backward()
    optimizer.step()
    if epoch % 5 == 0:
        print(f"epoch {epoch:2d} loss {loss.item():.5f}")

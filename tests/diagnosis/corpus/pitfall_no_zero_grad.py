# expect: missing-zero-grad
# ruff: noqa  (a learner's program, mistakes included)
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(1, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.linspace(0, 1, 20).unsqueeze(1)
y = 2 * x + 1

for epoch in range(50):
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    optimizer.step()
print(loss.item())

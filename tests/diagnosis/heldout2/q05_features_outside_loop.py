# expect: backward-twice-loop
# ruff: noqa
import torch
import torch.nn as nn

torch.manual_seed(0)
encoder = nn.Linear(10, 16)
head = nn.Linear(16, 2)
params = list(encoder.parameters()) + list(head.parameters())
optimizer = torch.optim.Adam(params, lr=1e-3)

data = torch.randn(32, 10)
labels = torch.randint(0, 2, (32,))
criterion = nn.CrossEntropyLoss()

features = torch.relu(encoder(data))  # compute once to save time

for epoch in range(3):
    optimizer.zero_grad()
    logits = head(features)
    loss = criterion(logits, labels)
    loss.backward()
    optimizer.step()
    print(f"epoch {epoch}: {loss.item():.4f}")

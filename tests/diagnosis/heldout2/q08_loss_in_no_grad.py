# expect: no-grad-fn-no-grad-block
# ruff: noqa
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)

pts = torch.rand(20, 2)
target = (pts[:, :1] > pts[:, 1:]).float()

for step in range(2):
    opt.zero_grad()
    with torch.no_grad():
        pred = model(pts)
        acc = ((pred > 0.5).float() == target).float().mean()
        print("acc", acc.item())
    loss = nn.functional.binary_cross_entropy_with_logits(pred, target)
    loss.backward()
    opt.step()

# expect: none
# ruff: noqa
import torch
import torch.nn as nn

torch.manual_seed(2)
net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
opt = torch.optim.SGD(net.parameters(), lr=0.1)
xtr, ytr = torch.randn(30, 4), torch.randint(0, 3, (30,))
xva, yva = torch.randn(10, 4), torch.randint(0, 3, (10,))

for epoch in range(3):
    net.train()
    opt.zero_grad()
    loss = nn.functional.cross_entropy(net(xtr), ytr)
    loss.backward()
    opt.step()

    net.eval()
    with torch.no_grad():
        val_logits = net(xva)
        val_loss = nn.functional.cross_entropy(val_logits, yva)
        acc = (val_logits.argmax(1) == yva).float().mean()
    print(epoch, round(loss.item(), 4), round(val_loss.item(), 4), acc.item())

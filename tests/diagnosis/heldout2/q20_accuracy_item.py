# expect: item-multi-element
# ruff: noqa
import torch
import torch.nn as nn

torch.manual_seed(0)
net = nn.Linear(5, 3)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
x = torch.randn(20, 5)
y = torch.randint(0, 3, (20,))

opt.zero_grad()
logits = net(x)
loss = nn.functional.cross_entropy(logits, y)
loss.backward()
opt.step()

correct = (logits.argmax(dim=1) == y).float()
print("loss", loss.item(), "accuracy", correct.item())

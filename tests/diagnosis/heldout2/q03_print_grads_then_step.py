# expect: backward-twice
# ruff: noqa
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(3, 6), nn.Tanh(), nn.Linear(6, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.05)

inputs = torch.randn(10, 3)
target = inputs.sum(dim=1, keepdim=True)

opt.zero_grad()
out = model(inputs)
loss = nn.functional.mse_loss(out, target)
loss.backward()

# debugging: look at gradient norms
for name, p in model.named_parameters():
    print(name, p.grad.norm().item())

# now do the real update
loss.backward()
opt.step()
print("loss", loss.item())

# expect: backward-twice-loop
# ruff: noqa  (a learner's program, mistakes included)
import torch

weight = torch.tensor([0.5, -0.3], requires_grad=True)
inputs = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
loss = ((inputs @ weight).sigmoid() - 1).pow(2).sum()

for epoch in range(3):
    loss.backward()
    with torch.no_grad():
        weight -= 0.1 * weight.grad
        weight.grad.zero_()
    print(epoch, loss.item())

# expect: item-multi-element
# ruff: noqa
import torch

theta = torch.tensor([1.0, -1.0], requires_grad=True)
history = []

for k in range(4):
    f = (theta ** 2 - 1.0) ** 2   # forgot to reduce
    f.sum().backward()
    with torch.no_grad():
        theta -= 0.1 * theta.grad
    theta.grad.zero_()
    history.append(f.item())

print(history)

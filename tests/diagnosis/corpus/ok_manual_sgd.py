# expect: none
# ruff: noqa  (a learner's program, mistakes included)
import torch

w = torch.zeros(2, requires_grad=True)
x = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
t = torch.tensor([1.0, 2.0])
for _ in range(5):
    loss = ((x @ w - t) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= 0.01 * w.grad
        w.grad.zero_()
print(w)

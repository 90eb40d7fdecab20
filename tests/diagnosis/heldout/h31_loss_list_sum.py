# expect: none
# ruff: noqa  (a learner's program, mistakes included)
import torch

w = torch.tensor([0.0, 0.0], requires_grad=True)
points = [(torch.tensor([1.0, 2.0]), 1.0), (torch.tensor([2.0, 0.5]), 0.0)]
losses = []
for x, y in points:
    losses.append((w.dot(x) - y) ** 2)
total = torch.stack(losses).sum()
total.backward()
print(w.grad)

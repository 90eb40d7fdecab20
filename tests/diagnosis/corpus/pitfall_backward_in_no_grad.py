# expect: backward-in-no-grad
# ruff: noqa  (a learner's program, mistakes included)
import torch

w = torch.tensor([1.0, 2.0], requires_grad=True)
loss = (w ** 2).sum()
with torch.no_grad():
    loss.backward()
    w -= 0.1 * w.grad
print(w)

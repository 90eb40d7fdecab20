# expect: missing-zero-grad
# ruff: noqa  (a learner's program, mistakes included)
import torch

a = torch.tensor(0.0, requires_grad=True)
for i in range(20):
    loss = (a - 3) ** 2
    loss.backward()
    with torch.no_grad():
        a -= 0.1 * a.grad
print(a)

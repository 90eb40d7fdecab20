# expect: nonleaf-grad-warning
# ruff: noqa  (a learner's program, mistakes included)
import torch

x = torch.tensor(2.0, requires_grad=True)
y = x ** 3
z = 2 * y + 1
z.backward()
print("dz/dx =", x.grad, "dz/dy =", y.grad)

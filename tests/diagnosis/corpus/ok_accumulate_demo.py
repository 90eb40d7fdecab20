# expect: none
# ruff: noqa  (a learner's program, mistakes included)
import torch

x = torch.tensor(1.0, requires_grad=True)
for i in range(3):
    y = x * x
    y.backward()
print(x.grad)  # 6: gradients add up

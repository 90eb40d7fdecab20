# expect: backward-twice-loop
# ruff: noqa  (a learner's program, mistakes included)
import torch

theta = torch.zeros(1, requires_grad=True)
objective = torch.exp(theta) * (theta - 2) ** 2
step = 0
while step < 4:
    objective.backward()
    step += 1
print(theta.grad)

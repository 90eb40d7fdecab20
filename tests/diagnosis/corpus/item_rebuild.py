# expect: no-grad-fn-python-number
# ruff: noqa  (a learner's program, mistakes included)
import torch

w = torch.tensor(3.0, requires_grad=True)
values = []
for x in [1.0, 2.0, 3.0]:
    values.append((w * x - 2 * x).item() ** 2)
total = torch.tensor(sum(values))
total.backward()

# expect: no-grad-fn-no-leaf
# ruff: noqa  (a learner's program, mistakes included)
import torch

x = torch.tensor([1.0, 2.0, 3.0])
w = torch.tensor([0.1, 0.2, 0.3])
y = (x * w).sum()
y.backward()
print(w.grad)

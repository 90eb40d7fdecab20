# expect: no-grad-fn-no-leaf
# ruff: noqa  (a learner's program, mistakes included)
import torch

xs = torch.tensor([0.0, 1.0, 2.0, 3.0])
ys = torch.tensor([1.0, 3.0, 5.0, 7.0])
m = torch.tensor(0.0)
c = torch.tensor(0.0)
loss = ((m * xs + c - ys) ** 2).mean()
loss.backward()
print(m.grad, c.grad)

# expect: no-grad-fn-no-grad-block
# ruff: noqa  (a learner's program, mistakes included)
import torch

w = torch.tensor([1.0, -1.0], requires_grad=True)
data = torch.tensor([[0.5, 1.5], [2.0, 0.1]])

with torch.no_grad():
    out = data @ w
    loss = (out ** 2).mean()

loss.backward()
print(w.grad)

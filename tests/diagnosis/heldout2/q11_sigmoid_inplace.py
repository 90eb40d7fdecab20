# expect: inplace-modified-output
# ruff: noqa
import torch

torch.manual_seed(0)
x = torch.randn(6, 4)
w = torch.randn(4, 1, requires_grad=True)

scores = torch.sigmoid(x @ w)
# rescale to the range [-1, 1]
scores.mul_(2).sub_(1)

loss = scores.pow(2).sum()
loss.backward()
print(w.grad.view(-1))

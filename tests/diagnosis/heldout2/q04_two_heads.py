# expect: backward-twice
# ruff: noqa
import torch

torch.manual_seed(1)
x = torch.randn(8, 5)
W_shared = torch.randn(5, 4, requires_grad=True)
w_a = torch.randn(4, 1, requires_grad=True)
w_b = torch.randn(4, 1, requires_grad=True)

hidden = torch.tanh(x @ W_shared)
out_a = hidden @ w_a
out_b = torch.sigmoid(hidden @ w_b)

loss_a = out_a.pow(2).mean()
loss_b = (1 - out_b).mean()

loss_a.backward()
loss_b.backward()
print(W_shared.grad.abs().sum())

# expect: mm-shape-mismatch
# ruff: noqa
import torch

torch.manual_seed(0)
n_samples, n_in, n_out = 10, 4, 2
inputs = torch.randn(n_samples, n_in)
W = torch.randn(n_out, n_in, requires_grad=True)   # stored like nn.Linear
b = torch.zeros(n_out, requires_grad=True)

out = torch.mm(inputs, W) + b
loss = out.pow(2).mean()
loss.backward()
print(W.grad)

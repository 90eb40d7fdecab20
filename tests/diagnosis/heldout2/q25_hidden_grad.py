# expect: grad-none-nonleaf
# ruff: noqa
import torch

torch.manual_seed(0)
x = torch.randn(4, 3)
W1 = torch.randn(3, 5, requires_grad=True)
W2 = torch.randn(5, 1, requires_grad=True)

hidden = torch.relu(x @ W1)
out = hidden @ W2
loss = out.mean()
loss.backward()

print("W1 grad norm:", W1.grad.norm().item())
print("hidden grad norm:", hidden.grad.norm().item())

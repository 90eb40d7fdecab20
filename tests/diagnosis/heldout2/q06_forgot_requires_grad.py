# expect: no-grad-fn-no-leaf
# ruff: noqa
import torch

# fit y = a * x^2 + c
x = torch.arange(0, 5, dtype=torch.float32)
y = 2.0 * x ** 2 + 1.0

a = torch.randn(())
c = torch.randn(())
lr = 0.001

for it in range(3):
    y_hat = a * x ** 2 + c
    loss = ((y_hat - y) ** 2).mean()
    loss.backward()
    a = a - lr * a.grad
    c = c - lr * c.grad
    print(it, loss.item())

# expect: leaf-inplace-update
# ruff: noqa
import torch

torch.manual_seed(3)
X = torch.randn(50, 3)
true_w = torch.tensor([[1.5], [-2.0], [0.5]])
Y = X @ true_w

weights = torch.zeros(3, 1, requires_grad=True)
learning_rate = 0.05

for epoch in range(10):
    preds = X @ weights
    mse = ((preds - Y) ** 2).mean()
    mse.backward()
    weights -= learning_rate * weights.grad
    weights.grad.zero_()
    if epoch % 2 == 0:
        print(epoch, mse.item())

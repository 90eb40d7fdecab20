# expect: none
# ruff: noqa
import numpy as np
import torch

w = torch.tensor([0.5, -0.3, 1.2], requires_grad=True)
x = torch.tensor([[1.0, 2.0, 3.0], [0.0, -1.0, 4.0]])

y = x @ w
loss = (y ** 2).sum()
loss.backward()

y_np = y.detach().numpy()
grad_np = w.grad.numpy()
print("outputs:", np.round(y_np, 3))
print("grad:", grad_np, "norm", np.linalg.norm(grad_np))

# expect: no-grad-fn-detached
# ruff: noqa  (a learner's program, mistakes included)
import torch

params = torch.randn(2, requires_grad=True)
xs = torch.tensor([1.0, 2.0, 3.0])
ys = torch.tensor([2.0, 4.1, 5.9])

pred = params[0] * xs + params[1]
pred_np_safe = pred.detach()
mse = ((pred_np_safe - ys) ** 2).mean()
mse.backward()

# expect: non-scalar-backward
# ruff: noqa  (a learner's program, mistakes included)
import torch
import torch.nn.functional as F

torch.manual_seed(0)
w = torch.randn(3, requires_grad=True)
features = torch.randn(5, 3)
targets = torch.randn(5)

preds = features @ w
per_sample = F.mse_loss(preds, targets, reduction="none")
per_sample.backward()
print(w.grad)

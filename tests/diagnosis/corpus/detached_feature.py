# expect: no-grad-fn-detached
# ruff: noqa  (a learner's program, mistakes included)
import torch

encoder_w = torch.randn(4, 4, requires_grad=True)
x = torch.randn(2, 4)
features = (x @ encoder_w).relu().detach()
head = features.sum(dim=1)
objective = head.mean()
objective.backward()

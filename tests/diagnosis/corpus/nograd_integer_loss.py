# expect: no-grad-fn-integer
# ruff: noqa  (a learner's program, mistakes included)
import torch

scores = torch.tensor([0.2, 0.9, 0.4], requires_grad=True)
labels = torch.tensor([0, 1, 0])
predicted = (scores > 0.5).long()
errors = (predicted - labels).abs().sum()
errors.backward()

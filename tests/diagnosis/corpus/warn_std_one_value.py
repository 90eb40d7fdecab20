# expect: reduction-too-few-values
# ruff: noqa  (a learner's program, mistakes included)
import torch

scores = torch.randn(1, 6)
normed = (scores - scores.mean(dim=0)) / scores.std(dim=0)
print(normed)

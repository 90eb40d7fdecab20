# expect: item-multi-element
# ruff: noqa  (a learner's program, mistakes included)
import torch

probs = torch.softmax(torch.tensor([1.0, 2.0, 3.0]), dim=0)
best = float(probs)
print(best)

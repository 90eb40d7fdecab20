# expect: bool-ambiguous
# ruff: noqa  (a learner's program, mistakes included)
import torch

grads = torch.tensor([0.01, 0.5, 0.002])
if grads > 0.1:
    print("large gradient")

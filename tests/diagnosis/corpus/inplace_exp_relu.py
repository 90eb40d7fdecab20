# expect: inplace-modified-output
# ruff: noqa  (a learner's program, mistakes included)
import torch

logits = torch.randn(3, 4, requires_grad=True)
e = logits.exp()
probs = e / e.sum(dim=1, keepdim=True)
e.clamp_(max=10.0)
probs.max(dim=1).values.sum().backward()

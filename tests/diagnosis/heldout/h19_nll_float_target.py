# expect: ce-target-dtype
# ruff: noqa  (a learner's program, mistakes included)
import torch
import torch.nn.functional as F

log_probs = F.log_softmax(torch.randn(3, 4, requires_grad=True), dim=1)
gold = torch.tensor([1.0, 0.0, 3.0])
nll = F.nll_loss(log_probs, gold)

# expect: item-multi-element
# ruff: noqa  (a learner's program, mistakes included)
import torch
import torch.nn.functional as F

pred = torch.randn(8, requires_grad=True)
target = torch.randn(8)
batch_loss = F.l1_loss(pred, target, reduction="none")
print(f"loss {batch_loss.item():.3f}")

# expect: backward-on-python-number
# ruff: noqa  (a learner's program, mistakes included)
import torch

def compute_loss(w):
    return float(((w - 2) ** 2).sum())

w = torch.tensor([1.0, 1.0], requires_grad=True)
loss = compute_loss(w)
loss.backward()

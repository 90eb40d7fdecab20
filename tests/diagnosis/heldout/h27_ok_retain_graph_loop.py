# expect: none
# ruff: noqa  (a learner's program, mistakes included)
import torch

w = torch.tensor([1.0, 2.0], requires_grad=True)
shared = (w * 3).sigmoid()
heads = [shared.sum(), (shared ** 2).sum(), shared.prod()]
for k, head in enumerate(heads):
    w.grad = None
    head.backward(retain_graph=k < len(heads) - 1)
    print(k, w.grad)

# expect: no-grad-fn-integer
# ruff: noqa  (a learner's program, mistakes included)
import torch

logits = torch.randn(5, 4, requires_grad=True)
guess = logits.argmax(dim=1)
wrong = (guess != torch.tensor([0, 1, 2, 3, 0])).sum()
wrong.backward()

# expect: missing-zero-grad
# ruff: noqa  (a learner's program, mistakes included)
import torch

w = torch.tensor([0.5, -0.5], requires_grad=True)
history = []
for lr in [0.1, 0.01, 0.001]:
    loss = (w ** 2).sum() * lr
    loss.backward()
    history.append(w.grad.norm().item())
print(history)

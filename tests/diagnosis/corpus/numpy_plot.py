# expect: numpy-requires-grad
# ruff: noqa  (a learner's program, mistakes included)
import torch

xs = torch.linspace(-1, 1, 5)
w = torch.tensor(0.7, requires_grad=True)
curve = torch.tanh(w * xs)
as_array = curve.numpy()
print(as_array.round(2))

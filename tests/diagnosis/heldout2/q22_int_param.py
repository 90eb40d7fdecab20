# expect: int-requires-grad
# ruff: noqa
import torch

# number of items bought of each product
counts = torch.tensor([2, 0, 5, 1], requires_grad=True)
prices = torch.tensor([1.5, 3.0, 0.25, 10.0])

total = (counts * prices).sum()
total.backward()
print("d total / d counts =", counts.grad)

# expect: int-requires-grad
# ruff: noqa  (a learner's program, mistakes included)
import torch

ages = torch.tensor([23, 35, 41], requires_grad=True)
mean_age = ages.mean()
print(mean_age)

# expect: leaf-inplace
# ruff: noqa
import torch

probs = torch.tensor([0.2, 0.5, 0.9, 1.2], requires_grad=True)
# make sure the probabilities are valid
probs.clamp_(0.0, 1.0)

entropy = -(probs * torch.log(probs + 1e-8)).sum()
entropy.backward()
print("entropy:", entropy.item())
print("grad:", probs.grad)

# expect: inplace-modified-input
# ruff: noqa
import torch

batch = torch.rand(4, 3) * 10
gain = torch.ones(3, requires_grad=True)

scaled = batch * gain
print("raw mean", scaled.mean().item())

# normalize the batch for the next step
batch -= batch.mean(dim=0)
batch /= batch.std(dim=0)

objective = (scaled ** 2).sum()
objective.backward()
print(gain.grad)

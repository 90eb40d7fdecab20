# expect: non-scalar-backward
# ruff: noqa
import torch

torch.manual_seed(0)
xs = torch.linspace(-1, 1, 16).unsqueeze(1)
ys = 3 * xs - 0.5 + 0.1 * torch.randn_like(xs)

slope = torch.zeros(1, requires_grad=True)
bias = torch.zeros(1, requires_grad=True)

for step in range(5):
    pred = xs * slope + bias
    per_sample = (pred - ys) ** 2  # one loss value per point
    per_sample.backward()
    with torch.no_grad():
        slope -= 0.1 * slope.grad
        bias -= 0.1 * bias.grad
        slope.grad.zero_()
        bias.grad.zero_()
    print(step, per_sample.mean().item())

# expect: none
# ruff: noqa
import torch

# tricky but correct: in-place updates of leaves inside no_grad
xs = torch.tensor([1.0, 2.0, 3.0, 4.0])
ys = torch.tensor([3.1, 4.9, 7.2, 8.8])
m = torch.tensor(0.0, requires_grad=True)
q = torch.tensor(0.0, requires_grad=True)

for step in range(100):
    loss = ((m * xs + q - ys) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        m -= 0.02 * m.grad
        q -= 0.02 * q.grad
    m.grad.zero_()
    q.grad.zero_()

print(f"m={m.item():.3f} q={q.item():.3f} loss={loss.item():.4f}")

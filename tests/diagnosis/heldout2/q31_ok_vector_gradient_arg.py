# expect: none
# ruff: noqa
import torch

# Jacobian-vector product: backward on a vector with an explicit gradient
t = torch.linspace(0, 3.14, 5, requires_grad=True)
s = torch.sin(t) * t

v = torch.ones_like(s)
s.backward(gradient=v)
expected = torch.cos(t) * t + torch.sin(t)
print(torch.allclose(t.grad, expected.detach()))

frozen = t.detach().clone()
frozen += 1.0  # fine: not part of any graph
print(frozen)

"""A hook, ``retain_grad()`` or ``torch.autograd.grad``'s inputs on a tensor that does not
require grad, on small programs of their own: the re-run's provenance of that tensor leads to
where it lost its graph (a ``no_grad`` block around the forward pass, ``.detach()``, a leaf
made without ``requires_grad``, parameters frozen on purpose), and the change shown there made
the program run in the sandbox."""

from __future__ import annotations

from typing import Any

import pytest

from .runs import verified_diagnosis

CASES = [
    # the activation hooked for its gradient was computed under no_grad, in a function
    ("subject-without-grad", 12, "    scores = net(x)", """import torch
import torch.nn as nn

net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
seen = []

def keep(module, inputs, output):
    output.register_hook(seen.append)

def saliency(x):
    net[1].register_forward_hook(keep)
    with torch.no_grad():
        scores = net(x)
    scores[:, 0].sum().backward()
    return seen[0]

print(saliency(torch.randn(3, 4)).shape)
"""),
    # retain_grad on a detached copy of the features
    ("subject-without-grad", 5, "feats = layer(x)\n", """import torch
import torch.nn as nn
layer = nn.Linear(3, 3)
x = torch.randn(2, 3)
feats = layer(x).detach()
feats.retain_grad()
out = (feats * 2).sum()
print(feats.grad)
"""),
    # autograd.grad asked for an input made without requires_grad
    ("subject-without-grad", 3, "b = torch.tensor(0.5, requires_grad=True)", """import torch
w = torch.tensor([1.0, 2.0], requires_grad=True)
b = torch.tensor(0.5)
x = torch.randn(5, 2)
y = (x @ w + b).pow(2).sum()
gw, gb = torch.autograd.grad(y, [w, b])
print(gw, gb)
"""),
    # autograd.grad asked for every parameter while the first layer is frozen
    ("grad-inputs-frozen", 8, "if p.requires_grad]", """import torch
import torch.nn as nn
net = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 1))
for p in net[0].parameters():
    p.requires_grad = False
x = torch.randn(6, 4)
loss = net(x).pow(2).mean()
grads = torch.autograd.grad(loss, net.parameters())
print(sum(g.norm() for g in grads))
"""),
]


@pytest.mark.parametrize(("expected", "root", "fix_has", "code"), CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_the_tensor_that_needs_grad_is_traced_to_where_it_lost_it(
        sandbox: Any, expected: str, root: int, fix_has: str, code: str) -> None:
    assert sandbox.run(code).outcome == "error"
    verified_diagnosis(sandbox, code, {expected}, root, fix_has)

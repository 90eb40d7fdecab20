"""What a program differentiates with respect to (a physics-informed network's coordinates, a
gradient penalty's interpolates) requires grad as an input: backward() reaches it and the
optimizer does not hold it, and that is right. It is never taken for a parameter the
optimizer misses."""

from __future__ import annotations

from typing import Any

from tutor.diagnosis.flow import Flow
from tutor.diagnosis.training_checks import differentiated

from .runs import not_diagnosed

PROGRAM = """import torch
import torch.nn as nn

def residual(net, points):
    u = net(points)
    du = torch.autograd.grad(u, points, grad_outputs=torch.ones_like(u), create_graph=True)[0]
    return du - torch.cos(points)

coords = torch.linspace(0, 1, 32).unsqueeze(1).requires_grad_(True)
net = nn.Sequential(nn.Linear(1, 16), nn.Tanh(), nn.Linear(16, 1))
opt = torch.optim.Adam(net.parameters(), lr=1e-2)
for _ in range(50):
    loss = residual(net, coords).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print(loss.item())
"""


def test_the_inputs_of_autograd_grad_are_found_through_the_call() -> None:
    flow = Flow.of(PROGRAM)
    assert flow is not None and differentiated(flow) == {"points", "coords"}


def test_coordinates_differentiated_against_are_not_missing_from_the_optimizer(sandbox: Any
                                                                               ) -> None:
    result = sandbox.run(PROGRAM, instrument=True)
    assert result.evidence is not None
    coords = [p for p in result.evidence.params if p.name == "coords"]
    assert coords and coords[0].reached and not coords[0].in_optimizer  # the trap is there
    not_diagnosed(sandbox, "optimizer-wrong-params", PROGRAM)

"""A term of a summed loss whose graph was cut (corpus15
derivative-loss-grad-without-create-graph, after its scoring): the recorder's history of the
backpropagated loss goes from the sum through the term to the op that cut it, and the change
tried keeps the graph there. A constant term, a detached target and a straight-through
estimator are not flagged."""

from __future__ import annotations

from typing import Any

from tutor.diagnosis.term_checks import dead_terms
from tutor.sandbox.models import BackwardEvidence, ChainLink, Evidence

from .runs import found_with_a_working_fix, not_diagnosed

DERIVATIVE = """import torch
from torch import nn
torch.manual_seed(0)
net = nn.Sequential(nn.Linear(1, 16), nn.Tanh(), nn.Linear(16, 1))
opt = torch.optim.Adam(net.parameters(), lr=0.01)
x = torch.linspace(-2, 2, 64).unsqueeze(1)
value, slope = torch.sin(x), torch.cos(x)
for epoch in range(60):
    x.requires_grad_(True)
    y = net(x)
    dy = torch.autograd.grad(y.sum(), x{graph})[0]
    loss_fit = ((y - value) ** 2).mean()
    loss_slope = ((dy - slope) ** 2).mean()
    loss = loss_fit + loss_slope
    opt.zero_grad()
    loss.backward()
    opt.step()
    if epoch % 20 == 19:
        print(epoch, round(loss_slope.item(), 4))
"""

PENALTY = """import torch
from torch import nn
torch.manual_seed(0)
model = nn.Linear(8, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(32, 8), torch.randn(32, 1)
for step in range(30):
    fit = ((model(x) - y) ** 2).mean()
    l2 = sum(p.pow(2).sum() for p in model.parameters()){item}
    loss = fit + 0.5 * l2
    opt.zero_grad()
    loss.backward()
    opt.step()
print(round(model.weight.norm().item(), 4))
"""

STRAIGHT_THROUGH = """import torch
from torch import nn
torch.manual_seed(0)
enc = nn.Linear(4, 4)
opt = torch.optim.SGD(enc.parameters(), lr=0.1)
x = torch.randn(16, 4)
for step in range(10):
    z = enc(x)
    q = z + (torch.round(z) - z).detach()
    loss = ((q - x) ** 2).mean() + 0.01
    opt.zero_grad()
    loss.backward()
    opt.step()
print(round(loss.item(), 4))
"""


def test_a_derivative_term_without_create_graph_is_kept_in_the_graph(sandbox: Any) -> None:
    found_with_a_working_fix(sandbox, "loss-term-without-gradient", 11, "create_graph=True",
                             DERIVATIVE.format(graph=", retain_graph=True"))
    not_diagnosed(sandbox, "loss-term-without-gradient",
                  DERIVATIVE.format(graph=", create_graph=True"))


def test_a_penalty_turned_into_a_number_keeps_its_tensor(sandbox: Any) -> None:
    found_with_a_working_fix(sandbox, "loss-term-without-gradient", 9,
                             "for p in model.parameters())", PENALTY.format(item=".item()"))
    not_diagnosed(sandbox, "loss-term-without-gradient", PENALTY.format(item=""))


def test_a_straight_through_estimator_and_a_constant_term_are_not_flagged(
        sandbox: Any) -> None:
    not_diagnosed(sandbox, "loss-term-without-gradient", STRAIGHT_THROUGH)


def _link(op: str, line: int, rg: bool, inputs_rg: bool, cut: str | None = None) -> ChainLink:
    return ChainLink(line=line, op=op, requires_grad=rg, inputs_rg=inputs_rg, cut=cut)


def test_only_a_sum_whose_term_lost_a_graph_is_a_dead_term() -> None:
    def backward(*chain: ChainLink) -> Evidence:
        return Evidence(backwards=[BackwardEvidence(line=9, requires_grad=True,
                                                    chain=list(chain))])
    summed = _link("add", 8, True, True)
    cut = _link("detach", 6, False, True, cut="detach")
    assert [d.cut.line for d in dead_terms(backward(summed, _link("mul", 7, False, False),
                                                    cut))] == [6]
    # the loss's own op is no sum (a target detached for mse_loss, as a DQN's)
    assert dead_terms(backward(_link("mse_loss", 8, True, True), _link("sub", 7, False, False),
                               cut)) == []
    # a term that never had a graph (a constant, a tensor made from numbers)
    assert dead_terms(backward(summed, _link("mul", 7, False, False),
                               _link("tensor", 6, False, False, cut="new"))) == []

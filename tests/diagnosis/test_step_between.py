"""An optimizer step between two backward() passes changes weights the second graph saved:
of several steps in between, the one to blame updates parameters the failing backward()
reaches, not the first step of the loop (another network's optimizer)."""

from __future__ import annotations

from typing import Any

from tutor.diagnosis.reasoning import diagnose

THREE = """import torch
import torch.nn as nn
torch.manual_seed(0)
C, D = nn.Linear(4, 2), nn.Linear(4, 1)
G = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 4))
opt_C = torch.optim.SGD(C.parameters(), lr=0.1)
opt_G = torch.optim.SGD(G.parameters(), lr=0.1)
opt_D = torch.optim.SGD(D.parameters(), lr=0.1)
x = torch.randn(8, 4)
fake = G(torch.randn(8, 3))
loss_C = C(x).pow(2).mean()
loss_D = D(fake).mean() - D(x).mean()
loss_G = -D(fake).mean()
opt_C.zero_grad()
loss_C.backward()
opt_C.step()
opt_G.zero_grad()
loss_G.backward(retain_graph=True)
opt_G.step()
opt_D.zero_grad()
loss_D.backward()
opt_D.step()
"""


def test_the_step_blamed_is_the_one_that_changed_what_the_failing_graph_saved(
        sandbox: Any) -> None:
    result = sandbox.run(THREE)
    assert result.error is not None and "modified by an inplace operation" in \
        result.error.message
    found = [d for d in diagnose(THREE, result, sandbox) if d.id.startswith("inplace-modified")]
    assert found and found[0].root_line == 19  # opt_G.step(), not opt_C.step() on line 16
    assert "line 19" in found[0].fix.en or "line 19" in found[0].explanation.en + str(
        found[0].direction.en if found[0].direction else "")


LOSSES_IN_TURN = """import torch
import torch.nn as nn
torch.manual_seed(0)
net = nn.Sequential(nn.Linear(3, 4), nn.Tanh())
x = torch.randn(5, 3)
h = net(x)
losses = (h.pow(2).mean(), h.abs().mean())
for item in losses:
    item.backward()
print(net[0].weight.grad)
"""


def test_losses_of_one_forward_pass_backpropagated_in_turn_are_summed(sandbox: Any) -> None:
    """The loop runs over the losses, not over training passes: one backward() of their sum
    gives the same gradients, and that is tried (not retain_graph, not moving the forward
    pass into the loop, which changes nothing here)."""
    result = sandbox.run(LOSSES_IN_TURN)
    top = diagnose(LOSSES_IN_TURN, result, sandbox)[0]
    assert top.id == "backward-twice" and top.root_line == 8 and top.fix_verified
    assert "sum(losses).backward()" in top.fix.en and "retain_graph" not in (top.patch or "")

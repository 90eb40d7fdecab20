"""Two backward() passes through one graph. An optimizer step between them changes weights
the second graph saved: of several steps in between, the one to blame updates parameters the
failing backward() reaches, not the first step of the loop (another network's optimizer).
The losses of one forward pass backpropagated in turn get one backward() of their sum. And a
diagnosis whose tried change did not work says its title as a lead ("Possibly: ..."), not as
the settled cause; what the message itself says stays a fact."""

from __future__ import annotations

from typing import Any

from .runs import first_for_error, verified_diagnosis

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
    first = first_for_error(sandbox, THREE)
    assert first.id.startswith("inplace-modified")
    assert first.root_line == 19  # opt_G.step(), not opt_C.step() on line 16
    assert "line 19" in first.fix.en


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
    first = verified_diagnosis(sandbox, LOSSES_IN_TURN, {"backward-twice"}, 8,
                               "sum(losses).backward()")
    assert "sum(losses).backward()" in first.fix.en and "retain_graph" not in (
        first.patch or "")
    assert not first.title.en.startswith("Possibly")  # a change that worked states its cause


LOGGED_IN_TURN = LOSSES_IN_TURN.replace("    item.backward()\n",
                                        "    item.backward()\n    print(item.item())\n")
"""The same loop with a second statement: the sum is not offered, and the diagnosis that
is (the forward pass computed before the loop) fails its trial."""


def test_a_diagnosis_whose_tried_change_failed_is_titled_as_a_lead(sandbox: Any) -> None:
    top = first_for_error(sandbox, LOGGED_IN_TURN)
    # moving line 6 into the loop was tried: the loop runs over the losses, not the passes
    assert top.fix_verified is False
    assert top.title.en.startswith("Possibly: `h` is computed once")
    assert top.title.zh.startswith("可能的原因：")


def test_what_the_message_itself_says_stays_a_fact(sandbox: Any) -> None:
    """A failed change on the failing line itself does not make the message's own fact a
    guess: the title names what the run showed there, not a cause elsewhere."""
    code = ("import torch\nn = 3\nsteps = torch.arange(n)\nsteps.requires_grad_(True)\n"
            "print((steps * 2).sum())\n")
    result = sandbox.run(code)
    assert result.error is not None and result.error.line == 4
    top = first_for_error(sandbox, code)
    assert not top.title.en.startswith("Possibly") and not top.title.zh.startswith("可能的原因")

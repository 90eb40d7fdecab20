"""Gradient accumulation that sums: several passes of one line before each conditional
step, the loss not divided. The change tried divides it by the number of passes the run saw,
kept only where the step's update shrinks by about that factor; losses of several terms of
one step, and an optimizer that normalises its step, are not blamed."""

from __future__ import annotations

from typing import Any

from .runs import found_with_a_working_fix, not_diagnosed

PROGRAM = """import torch
import torch.nn as nn

model = nn.Linear(6, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(64, 6), torch.randint(0, 2, (64,))
accum = 4
for i, (xb, yb) in enumerate(zip(x.split(8), y.split(8))):
    loss = nn.functional.cross_entropy(model(xb), yb)
    loss.backward()
    if (i + 1) % accum == 0:
        opt.step()
        opt.zero_grad()
print(loss.item())
"""


def test_accumulated_losses_are_divided_by_the_passes_the_run_saw(sandbox: Any) -> None:
    found_with_a_working_fix(sandbox, "accumulation-summed", 10, "(loss / 4).backward()",
                             PROGRAM)


def test_losses_divided_where_they_are_made_are_not_blamed(sandbox: Any) -> None:
    right = PROGRAM.replace("cross_entropy(model(xb), yb)", "cross_entropy(model(xb), yb) / accum")
    not_diagnosed(sandbox, "accumulation-summed", right)


def test_several_terms_of_one_step_are_not_blamed(sandbox: Any) -> None:
    """Two losses back-propagated by one line, then one step every time: meant to add up."""
    terms = PROGRAM.replace("    loss.backward()\n    if (i + 1) % accum == 0:\n"
                            "        opt.step()\n        opt.zero_grad()\n",
                            "    for term in (loss, model(xb).pow(2).mean()):\n"
                            "        term.backward()\n    opt.step()\n    opt.zero_grad()\n")
    assert terms != PROGRAM
    not_diagnosed(sandbox, "accumulation-summed", terms)


def test_adam_whose_step_barely_depends_on_the_scale_is_not_blamed(sandbox: Any) -> None:
    not_diagnosed(sandbox, "accumulation-summed", PROGRAM.replace("optim.SGD", "optim.Adam"))


# a GAN whose step() clears the generator's gradients and never the discriminator's (corpus14
# gan-step-discriminator-grads-never-cleared, after its scoring): the discriminator steps on
# the sum of every pass so far, including the generator's passes through it
GAN = """import torch
import torch.nn as nn

class GAN:
    def __init__(self):
        self.G = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
        self.D = nn.Sequential(nn.Linear(2, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
        self.bce = nn.BCEWithLogitsLoss()
        self.opt_g = torch.optim.Adam(self.G.parameters(), lr=2e-4)
        self.opt_d = torch.optim.Adam(self.D.parameters(), lr=2e-4)

    def step(self, real):
        fake = self.G(torch.randn(real.size(0), 4))
{clear_d}        loss_d = self.bce(self.D(real), torch.ones(len(real), 1)) + \\
            self.bce(self.D(fake.detach()), torch.zeros(len(real), 1))
        loss_d.backward()
        self.opt_d.step()
        self.G.zero_grad()
        loss_g = self.bce(self.D(fake), torch.ones(len(real), 1))
        loss_g.backward()
        self.opt_g.step()

gan = GAN()
for _ in range(6):
    gan.step(torch.randn(32, 2) + 2)
"""


def test_an_optimizer_whose_gradients_nothing_clears_between_its_steps(sandbox: Any) -> None:
    found_with_a_working_fix(sandbox, "optimizer-grads-never-cleared", 16,
                             "self.opt_d.zero_grad()", GAN.format(clear_d=""))
    not_diagnosed(sandbox, "optimizer-grads-never-cleared",
                  GAN.format(clear_d="        self.opt_d.zero_grad()\n"))


def test_gradients_accumulated_over_micro_batches_then_cleared_are_meant(sandbox: Any) -> None:
    not_diagnosed(sandbox, "optimizer-grads-never-cleared", PROGRAM)

"""A scheduler given what is not a ``torch.optim.Optimizer`` ("X is not an Optimizer"), and an
optimizer state loaded into an optimizer over other parameters, on
small programs of their own: a hand-written optimizer is made a subclass of it, a wrapper
around an optimizer hands the scheduler the optimizer it holds; each change is tried."""

from __future__ import annotations

from typing import Any

from .runs import first_for_error

HAND_WRITTEN = """import torch
import torch.nn as nn


class PlainDescent:
    def __init__(self, params, lr):
        self.param_groups = [{"params": list(params), "lr": lr}]
        self.state = {}

    def zero_grad(self):
        for group in self.param_groups:
            for p in group["params"]:
                p.grad = None

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p -= group["lr"] * p.grad


net = nn.Linear(5, 1)
opt = PlainDescent(net.parameters(), lr=0.1)
schedule = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10)
for _ in range(3):
    opt.zero_grad()
    net(torch.randn(8, 5)).pow(2).mean().backward()
    opt.step()
    schedule.step()
print(opt.param_groups[0]["lr"])
"""


def test_a_hand_written_optimizer_is_made_a_subclass_of_optimizer(sandbox: Any) -> None:
    first = first_for_error(sandbox, HAND_WRITTEN)
    assert (first.id, first.root_line, first.fix_verified) == ("optimizer-not-subclass", 5,
                                                               True)
    assert first.patch is not None and "+class PlainDescent(torch.optim.Optimizer):" in \
        first.patch
    assert "`PlainDescent`" in first.title.en and "第 25 行" in first.title.zh


WRAPPED = """import torch
import torch.nn as nn


class Averaged:
    def __init__(self, inner, k=5):
        self.base = inner
        self.k = k

    @property
    def param_groups(self):
        return self.base.param_groups

    def zero_grad(self):
        self.base.zero_grad()

    def step(self):
        self.base.step()


class Warmup(torch.optim.lr_scheduler.LambdaLR):
    def __init__(self, optimizer, steps):
        super().__init__(optimizer, lambda n: min(1.0, (n + 1) / steps))


net = nn.Linear(5, 1)
sgd = torch.optim.SGD(net.parameters(), lr=0.1)
opt = Averaged(sgd, k=3)
warm = Warmup(opt, steps=4)
for _ in range(3):
    opt.zero_grad()
    net(torch.randn(8, 5)).pow(2).mean().backward()
    opt.step()
    warm.step()
print(sgd.param_groups[0]["lr"])
"""


def test_a_wrapper_hands_the_scheduler_the_optimizer_it_holds(sandbox: Any) -> None:
    # the scheduler is the program's own subclass: the traceback's line that builds it is
    # where the wrapper is handed over, not the super().__init__ that raised
    first = first_for_error(sandbox, WRAPPED)
    assert (first.id, first.root_line, first.fix_verified) == ("scheduler-given-wrapper", 29,
                                                               True)
    assert first.patch is not None and "+warm = Warmup(opt.base, steps=4)" in first.patch
    assert all(step.en and step.zh for step in first.chain)


def test_a_class_the_program_does_not_define_is_left_to_the_message(sandbox: Any) -> None:
    code = """import torch
net = torch.nn.Linear(2, 1)
schedule = torch.optim.lr_scheduler.StepLR(net, step_size=2)
"""
    first = first_for_error(sandbox, code)
    assert first.id not in ("optimizer-not-subclass", "scheduler-given-wrapper")


def test_an_optimizer_state_saved_over_other_parameters_is_named(sandbox: Any) -> None:
    # the state was saved by an optimizer of the whole model, loaded into one of its head:
    # the message's family, said with the program's name and the line, and a direction (no
    # change of code is claimed)
    code = """import io
import torch
import torch.nn as nn
net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
full = torch.optim.Adam(net.parameters())
net(torch.randn(3, 4)).sum().backward()
full.step()
saved = io.BytesIO()
torch.save(full.state_dict(), saved)
saved.seek(0)
head = torch.optim.Adam(net[2].parameters())
head.load_state_dict(torch.load(saved))
"""
    first = first_for_error(sandbox, code)
    assert first.id == "optimizer-state-mismatch" and first.line == 12
    assert "line 12" in first.title.en and "第 12 行" in first.title.zh
    assert "`head`" in first.explanation.en
    assert first.fix.en.startswith("Before loading, build the optimizer")

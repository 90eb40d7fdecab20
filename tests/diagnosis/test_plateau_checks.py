"""``ReduceLROnPlateau.step()`` without the value it watches: the program's names for a loss
or a metric where the step is called are tried, a held-out one first."""

from __future__ import annotations

from typing import Any

from .runs import diagnoses_for

PLATEAU = """import torch
torch.manual_seed(0)
net = torch.nn.Linear(3, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=1)
x, y = torch.randn(16, 3), torch.randn(16, 1)
for epoch in range(3):
    train_loss = (net(x) - y).pow(2).mean()
    opt.zero_grad()
    train_loss.backward()
    opt.step()
    with torch.no_grad():
        val_loss = (net(x[:4]) - y[:4]).pow(2).mean().item()
    sched.step()
    print(epoch, val_loss)
"""


def test_the_validation_loss_is_given_to_the_plateau_scheduler(sandbox: Any) -> None:
    first = diagnoses_for(sandbox, PLATEAU)[0]
    assert (first.id, first.root_line, first.fix_verified) == ("plateau-without-metric", 14,
                                                                True)
    assert first.patch is not None and "+    sched.step(val_loss)" in first.patch


NOTHING = """import torch
net = torch.nn.Linear(3, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt)
sched.step()
"""


def test_with_no_metric_in_sight_the_diagnosis_says_what_to_pass_without_a_patch(
        sandbox: Any) -> None:
    first = diagnoses_for(sandbox, NOTHING)[0]
    assert (first.id, first.root_line, first.patch) == ("plateau-without-metric", 5, None)
    assert "`sched.step(val_loss)`" in first.fix.en


PER_BATCH = """import torch
net = torch.nn.Linear(3, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt)
for epoch in range(2):
    for batch in range(4):
        loss = net(torch.randn(4, 3)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
"""


def test_a_training_loss_is_not_offered_as_the_metric(sandbox: Any) -> None:
    # `sched.step(loss)` would run, stepping the plateau count per batch on the training
    # loss (a judged wrong of 2026-12-07-g): the diagnosis says what to pass, no patch
    first = diagnoses_for(sandbox, PER_BATCH)[0]
    assert (first.id, first.patch) == ("plateau-without-metric", None)

"""A scheduler given ``last_epoch=`` over a fresh optimizer: ``KeyError: 'initial_lr'``.
``last_epoch`` counts from -1 (nothing done), so the count of epochs done minus one is tried
first, then the argument left out."""

from __future__ import annotations

from typing import Any

from .runs import first_for_error, verified_diagnosis

PROGRAM = """import torch
import torch.nn as nn

class Trainer:
    def __init__(self, model, start_epoch=0):
        self.start_epoch = start_epoch
        self.opt = torch.optim.SGD(model.parameters(), lr=0.1)
        self.sched = torch.optim.lr_scheduler.StepLR(self.opt, step_size=2,
                                                     last_epoch=self.start_epoch)

trainer = Trainer(nn.Linear(2, 1))
print(trainer.opt.param_groups[0]["lr"])
"""


def test_the_epoch_count_is_made_an_index(sandbox: Any) -> None:
    first = verified_diagnosis(sandbox, PROGRAM, {"scheduler-resumed-fresh"}, 9,
                               "last_epoch=self.start_epoch - 1")
    assert first.chain and "initial_lr" in first.chain[0].en


def test_a_literal_last_epoch_is_counted_down(sandbox: Any) -> None:
    code = PROGRAM.replace("last_epoch=self.start_epoch", "last_epoch=0")
    verified_diagnosis(sandbox, code, {"scheduler-resumed-fresh"}, 9, "last_epoch=-1")


def test_another_key_error_is_not_this(sandbox: Any) -> None:
    code = PROGRAM.replace('param_groups[0]["lr"]', 'param_groups[0]["rate"]').replace(
        "last_epoch=self.start_epoch", "last_epoch=-1")
    assert first_for_error(sandbox, code).id != "scheduler-resumed-fresh"


RESUMING = """import torch
import torch.nn as nn


def build(model, checkpoint=None, start_epoch=0):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5,
                                            last_epoch=start_epoch - 1)
    if checkpoint is not None:
        opt.load_state_dict(checkpoint)
    return opt, sched


model = nn.Linear(2, 1)
opt, sched = build(model)
for epoch in range(3):
    opt.step()
    sched.step()
opt, sched = build(model, opt.state_dict(), start_epoch=3)
print(opt.param_groups[0]["lr"])
"""


def test_a_resume_builds_the_scheduler_after_the_state_is_loaded(sandbox: Any) -> None:
    # the program loads the optimizer's state after the scheduler: dropping `last_epoch`
    # would run and restart the schedule, so only the reorder is offered
    first = first_for_error(sandbox, RESUMING)
    assert (first.id, first.root_line, first.fix_verified) == (
        "scheduler-built-before-resume", 7, True)
    assert first.patch is not None and "last_epoch" not in first.fix.en
    assert "+    if checkpoint is not None:\n+        opt.load_state_dict(checkpoint)\n" \
        "     sched = torch.optim.lr_scheduler.StepLR(" in first.patch

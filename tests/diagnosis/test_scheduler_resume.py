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

"""A step after the loop that walks the data in batches (each batch cleared and
back-propagated, one step per epoch): the step moves into the loop and is tried. The same
shape over the micro-batches of one batch is accumulation whose zero_grad is misplaced, and
keeps that diagnosis."""

from __future__ import annotations

from typing import Any

from .runs import found_with_a_working_fix, not_diagnosed, verified_diagnosis

PROGRAM = """import torch
import torch.nn as nn

X = torch.randn(256, 8)
Y = (X @ torch.randn(8, 3)).argmax(dim=1)
model = nn.Linear(8, 3)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(5):
    for i in range(0, len(X), 32):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(X[i:i + 32]), Y[i:i + 32])
        loss.backward()
    opt.step()
print(loss.item())
"""


def test_a_step_after_the_batch_loop_moves_into_it(sandbox: Any) -> None:
    found_with_a_working_fix(sandbox, "step-outside-batch-loop", 13, "opt.step()", PROGRAM)


def test_micro_batches_of_one_batch_keep_the_accumulation_diagnosis(sandbox: Any) -> None:
    code = PROGRAM.replace("for i in range(0, len(X), 32):", "for i in range(0, 128, 32):")
    verified_diagnosis(sandbox, code, {"zero-grad-erases-accumulation"}, 10, "opt.zero_grad()")


ACCUMULATING = """import torch
import torch.nn as nn
from torch.optim.lr_scheduler import LambdaLR

X = torch.randn(256, 8)
Y = (X @ torch.randn(8, 3)).argmax(dim=1)
model = nn.Linear(8, 3)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
total = 2 * 8 // 4
sched = LambdaLR(opt, lambda step: max(0.0, 1 - step / total))
for epoch in range(2):
    for i in range(8):
        loss = nn.functional.cross_entropy(model(X[i * 32:(i + 1) * 32]), Y[i * 32:(i + 1) * 32])
        (loss / 4).backward()
        if (i + 1) % 4 == 0:
            opt.step()
            opt.zero_grad()
        sched.step()
print(opt.param_groups[0]["lr"])
"""


def test_a_scheduler_stepped_at_every_micro_batch_moves_under_the_optimizers_if(
        sandbox: Any) -> None:
    first = verified_diagnosis(sandbox, ACCUMULATING, {"scheduler-outpaces-optimizer"}, 18,
                               "sched.step()")
    assert "(i + 1) % 4 == 0" in first.title.en


def test_a_scheduler_stepped_with_its_optimizer_is_not_blamed(sandbox: Any) -> None:
    right = ACCUMULATING.replace("            opt.zero_grad()\n        sched.step()\n",
                                 "            opt.zero_grad()\n            sched.step()\n")
    assert right != ACCUMULATING
    not_diagnosed(sandbox, "scheduler-outpaces-optimizer", right)

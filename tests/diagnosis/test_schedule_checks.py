"""A learning-rate schedule that collapses within the training the program runs, on small
programs of their own: a scheduler counted in epochs but stepped at every batch gets the move
out of the batch loop, tried; schedules made for per-batch steps, or ending near zero only at
the end of training, get nothing."""

from __future__ import annotations

from typing import Any

from tutor.diagnosis.reasoning import diagnose

from .runs import found_with_a_working_fix, not_diagnosed, verified_diagnosis

LOOP = """import torch
import torch.nn as nn
torch.manual_seed(0)
x = torch.randn(96, 4)
y = x @ torch.tensor([[1.0], [-2.0], [0.5], [3.0]])
batches = [(x[i:i + 16], y[i:i + 16]) for i in range(0, 96, 16)]
model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
epochs = 12
{scheduler}

def train():
    for epoch in range(epochs):
        for xb, yb in batches:
            opt.zero_grad()
            loss = ((model(xb) - yb) ** 2).mean()
            loss.backward()
            opt.step()
            sched.step()
        print(epoch, round(loss.item(), 4))

train()
"""


def test_a_scheduler_counted_in_epochs_and_stepped_per_batch_is_moved_out(sandbox: Any
                                                                           ) -> None:
    code = LOOP.format(scheduler="sched = torch.optim.lr_scheduler.StepLR(opt, step_size=4, "
                                 "gamma=0.1)")
    assert sandbox.run(code).ok
    first = verified_diagnosis(sandbox, code, {"lr-schedule-collapse"}, 19,
                               "+        sched.step()")
    assert "0.05" in first.title.en and first.fix_check is not None


def test_schedules_made_for_batches_are_not_a_collapse(sandbox: Any) -> None:
    for scheduler in (
            "sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, "
            "total_steps=epochs * len(batches))",
            "sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs * len(batches))"):
        code = LOOP.format(scheduler=scheduler)
        found = diagnose(code, sandbox.run(code), sandbox)
        assert "lr-schedule-collapse" not in {d.id for d in found}, scheduler


# a cosine schedule sized in batches (T_max=len(loader)) stepped once per epoch (corpus14
# simclr-cosine-tmax-batches-stepped-per-epoch, after its scoring): over the whole run the
# learning rate hardly moves; sizing it in epochs is tried, and stepping it per batch where
# the step is a plain statement of the epoch loop
SIZED = """import torch
import torch.nn as nn
torch.manual_seed(0)
model = nn.Linear(4, 1)
loader = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(20)]
epochs = 6
opt = torch.optim.SGD(model.parameters(), lr=0.1)
sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max={horizon})
for epoch in range(epochs):
    for x, y in loader:
        loss = ((model(x) - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    sched.step()
print(opt.param_groups[0]["lr"])
"""


def test_a_schedule_sized_in_batches_but_stepped_per_epoch(sandbox: Any) -> None:
    found_with_a_working_fix(sandbox, "schedule-sized-in-batches", 8, "T_max=epochs",
                             SIZED.format(horizon="len(loader) * epochs"))
    not_diagnosed(sandbox, "schedule-sized-in-batches", SIZED.format(horizon="epochs"))


def test_a_number_given_as_lr_lambda_becomes_a_function_of_the_epoch(sandbox: Any) -> None:
    from .runs import first_for_error

    code = """import torch
net = torch.nn.Linear(2, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
decay = torch.optim.lr_scheduler.LambdaLR(opt, 0.9)
for epoch in range(3):
    opt.zero_grad()
    net(torch.randn(4, 2)).sum().backward()
    opt.step()
    decay.step()
"""
    first = first_for_error(sandbox, code)
    assert (first.id, first.root_line, first.fix_verified) == ("lr-lambda-not-function", 4,
                                                               True)
    # LambdaLR multiplies the initial rate: a decay by the factor each epoch is a power
    assert first.patch is not None and "LambdaLR(opt, lambda epoch: 0.9 ** epoch)" in first.patch
    assert "`LambdaLR`" in first.title.en and all(step.zh for step in first.chain)

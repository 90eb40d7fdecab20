"""An optimizer with state built anew inside the training loop: the run marks each step that
is an optimizer's first, and the change tried builds it once, before the loop. One built once,
and plain SGD (which keeps no state to lose), are not blamed."""

from __future__ import annotations

from typing import Any

from .runs import found_with_a_working_fix, not_diagnosed

PROGRAM = """import torch

def fit(w, target, steps=40):
    for _ in range(steps):
        opt = torch.optim.Adam([w], lr=0.05)
        loss = ((w - target) ** 2).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return loss.item()

w = torch.zeros(3, requires_grad=True)
print(fit(w, torch.tensor([1.0, -2.0, 0.5])))
"""


def test_an_adam_built_at_every_step_is_built_once(sandbox: Any) -> None:
    found_with_a_working_fix(sandbox, "optimizer-rebuilt", 5, "opt = torch.optim.Adam", PROGRAM)


def test_the_run_marks_only_an_optimizers_first_step_fresh(sandbox: Any) -> None:
    rebuilt = sandbox.run(PROGRAM, instrument=True)
    assert rebuilt.evidence is not None and all(s.fresh for s in rebuilt.evidence.steps)
    once = PROGRAM.replace(
        "    for _ in range(steps):\n        opt = torch.optim.Adam([w], lr=0.05)\n",
        "    opt = torch.optim.Adam([w], lr=0.05)\n    for _ in range(steps):\n")
    kept = sandbox.run(once, instrument=True)
    assert kept.evidence is not None
    assert [s.fresh for s in kept.evidence.steps[:3]] == [True, False, False]
    not_diagnosed(sandbox, "optimizer-rebuilt", once)


def test_plain_sgd_rebuilt_loses_nothing_and_is_not_blamed(sandbox: Any) -> None:
    not_diagnosed(sandbox, "optimizer-rebuilt", PROGRAM.replace("optim.Adam", "optim.SGD"))


SCHEDULE = """import torch

class Warmup:
    def __init__(self, optimizer, peak):
        self.optimizer, self.peak = optimizer, peak

    def step(self, n):
        self.optimizer.lr = self.peak * min(1.0, (n + 1) / 5)

w = torch.zeros(2, requires_grad=True)
opt = torch.optim.SGD([w], lr=0.01)
warm = Warmup(opt, 0.1)
for n in range(10):
    warm.step(n)
    loss = ((w - 1) ** 2).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
print(opt.param_groups[0]["lr"], w)
"""


def test_a_rate_set_as_an_attribute_is_set_in_the_param_groups(sandbox: Any) -> None:
    found_with_a_working_fix(sandbox, "hyperparameter-as-attribute", 8,
                             "for group in self.optimizer.param_groups:", SCHEDULE)


def test_the_run_names_the_attribute_an_optimizer_never_reads(sandbox: Any) -> None:
    result = sandbox.run(SCHEDULE, instrument=True)
    assert result.evidence is not None and result.evidence.training.misplaced == ["lr"]
    right = SCHEDULE.replace(
        "        self.optimizer.lr = self.peak * min(1.0, (n + 1) / 5)",
        "        for group in self.optimizer.param_groups:\n"
        "            group['lr'] = self.peak * min(1.0, (n + 1) / 5)")
    done = sandbox.run(right, instrument=True)
    assert done.evidence is not None and done.evidence.training.misplaced == []
    not_diagnosed(sandbox, "hyperparameter-as-attribute", right)

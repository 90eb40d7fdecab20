"""Values reduced to one number before they are weighted one by one, on a small program of
its own: the backward chain shows a product of N elements fed by a full reduction of N, and
the change tried weights before reducing. Weighting first, and a plain scalar factor, are
not blamed. Slow programs get limits that fit their own run."""

from __future__ import annotations

from typing import Any

from tutor.diagnosis.fixes import VERIFY_LIMITS
from tutor.diagnosis.reasoning import MAX_TRIAL_S, trial_limits
from tutor.sandbox.models import RunResult

from .runs import found_with_a_working_fix, not_diagnosed

PROGRAM = """import torch

scores = torch.zeros(4, requires_grad=True)
opt = torch.optim.SGD([scores], lr=0.5)
target = torch.tensor([1.0, 0.0, 0.0, 0.0])
for step in range(30):
    log_p = torch.log_softmax(scores, dim=0)
    weights = target - target.mean()
    mean_log_p = log_p.mean()
    loss = -(mean_log_p * weights).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
print(torch.softmax(scores, dim=0))
"""


def test_a_mean_weighted_by_many_weights_is_weighted_before_reducing(sandbox: Any) -> None:
    found_with_a_working_fix(sandbox, "reduced-before-weighting", 10, "-(log_p * weights)",
                             PROGRAM)


def test_weighting_before_reducing_is_not_blamed(sandbox: Any) -> None:
    not_diagnosed(sandbox, "reduced-before-weighting",
                  PROGRAM.replace("(mean_log_p * weights)", "(log_p * weights)"))


def test_a_mean_times_one_number_is_not_blamed(sandbox: Any) -> None:
    code = PROGRAM.replace("weights = target - target.mean()", "weights = torch.tensor(2.0)")
    not_diagnosed(sandbox, "reduced-before-weighting", code)


def test_a_slow_programs_rerun_and_trials_get_time_of_its_own_measure() -> None:
    def ran(ms: float) -> RunResult:
        return RunResult(outcome="ok", device="cpu", duration_ms=ms)

    assert trial_limits(ran(300)) == VERIFY_LIMITS
    assert trial_limits(ran(4000)).wall_time_s == 12.0
    assert trial_limits(ran(60_000)).wall_time_s == MAX_TRIAL_S

"""A budgeted instrumented run ends each loop that trains once it made the passes asked for,
runs the code after it, and says in its evidence where it was cut; what needs the whole run
gets it."""

from __future__ import annotations

from typing import Any

from tutor.diagnosis.fixes import SERIES, VERIFY_LIMITS
from tutor.diagnosis.reasoning import diagnose_with_evidence
from tutor.diagnosis.trial_runs import Trial, instrumented
from tutor.sandbox.models import RunBudget

LONG_TRAINING = """import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(2, 8), nn.Dropout(0.5), nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(16, 2)
y = x.sum(dim=1, keepdim=True)
epoch = 0
while epoch < 100:
    for i in range(30):
        loss = ((model(x) - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    epoch += 1
with torch.no_grad():
    pred = model(x)
for row in pred[:3]:
    print("prediction", round(row.item(), 2))
print("trained", epoch, "epochs")
"""


def test_the_budget_ends_a_long_training_cleanly_and_the_evidence_says_where(
        sandbox: Any) -> None:
    budget = RunBudget(backwards=40, steps=40)
    cut = sandbox.run(LONG_TRAINING, instrument=True, budget=budget)
    whole = sandbox.run(LONG_TRAINING, instrument=True)
    assert cut.outcome == whole.outcome == "ok"
    assert whole.evidence.cut is None and whole.stdout.endswith("trained 100 epochs\n")
    ev = cut.evidence
    # the inner loop ended after the 40th pass (its 10th in the second epoch), the outer one
    # at its next test; the code after them ran, the loop over the predictions in full
    assert ev.cut is not None and (ev.cut.line, ev.cut.backwards, ev.cut.steps) == (11, 40, 40)
    assert ev.truncated and len(ev.backwards) == 40
    assert cut.stdout.count("prediction") == 3 and cut.stdout.endswith("trained 2 epochs\n")
    assert any(m.line == 18 and not m.grad_enabled for m in ev.modules)  # the prediction
    # what it recorded is what the whole run recorded of those passes
    assert [b.loss for b in ev.backwards] == [b.loss for b in whole.evidence.backwards[:40]]
    assert ev.steps == whole.evidence.steps


def test_a_budgeted_run_keeps_the_learners_lines() -> None:
    from tutor.sandbox.budget import compile_budgeted

    code = "total = 0\nfor i in range(3):\n    total += i\nelse:\n    total += 10\n" \
           "while total < 20:\n    total += 1\nsquares = [j * j for j in range(4)]\n" \
           "raise ValueError(total)\n"
    namespace: dict[str, Any] = {"__tutor_loop__": lambda items, line: items,
                                 "__tutor_more__": lambda key, line: True}
    try:
        exec(compile_budgeted(code, "<learner>"), namespace)
    except ValueError as exc:
        assert exc.args == (20,) and exc.__traceback__ is not None
        assert exc.__traceback__.tb_next is not None
        assert exc.__traceback__.tb_next.tb_lineno == 9
    assert namespace["squares"] == [0, 1, 4, 9]
    try:
        compile_budgeted("for x in :\n", "<learner>")
    except SyntaxError as exc:
        assert exc.lineno == 1 and exc.filename == "<learner>"
    else:
        raise AssertionError("a program that does not parse must raise as it always did")


FAILS_AFTER_TRAINING = """import torch

w = torch.zeros(1, requires_grad=True)
opt = torch.optim.SGD([w], lr=0.01)
for step in range(400):
    loss = ((w - 3) ** 2).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
assert w.item() > 2.999, "not trained enough"
print("trained")
"""
"""Runs without error in full; its final check fails after a training cut short."""


def test_a_cut_run_that_then_fails_runs_whole(sandbox: Any) -> None:
    short = sandbox.run(FAILS_AFTER_TRAINING, instrument=True, budget=SERIES)
    assert short.outcome == "error" and short.evidence.cut is not None
    run = instrumented(sandbox, Trial(FAILS_AFTER_TRAINING, SERIES), "cpu", VERIFY_LIMITS)
    assert run.outcome == "ok" and run.stdout == "trained\n"
    assert run.evidence is not None and run.evidence.cut is None


FAILS_LATE_IN_TRAINING = """import torch

w = torch.zeros(1, requires_grad=True)
opt = torch.optim.SGD([w], lr=0.01)
for step in range(400):
    loss = ((w - 3) ** 2).sum()
    if step == 350:
        loss = loss.detach()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""
"""An error at the 351st pass: the re-run of an error runs up to it, not to a budget."""


def test_an_errors_re_run_runs_whole(sandbox: Any) -> None:
    result = sandbox.run(FAILS_LATE_IN_TRAINING)
    assert result.outcome == "error" and result.error is not None
    found, evidence = diagnose_with_evidence(FAILS_LATE_IN_TRAINING, result, sandbox)
    # it ran past what a silent bug's budget keeps, up to the error, and was not cut
    assert evidence is not None and evidence.cut is None
    assert len(evidence.backwards) == SERIES.backwards and evidence.truncated
    assert found and found[0].line == 10


SELF_COPY_EVERY_100 = """import torch
import torch.nn as nn

torch.manual_seed(0)
net = nn.Linear(4, 2)
target = nn.Linear(4, 2)
opt = torch.optim.SGD(net.parameters(), lr=0.01)
x = torch.randn(8, 4)
for step in range(400):
    loss = (net(x) - target(x).detach()).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 100 == 99:
        target.load_state_dict(target.state_dict())
"""
"""A target network copied from itself every 100 steps: the diagnosis counts the copies of
the whole run (4 of each tensor), a re-run cut at the recording's 300 passes saw 3."""


def test_a_check_that_counts_the_whole_run_gets_the_whole_run(sandbox: Any) -> None:
    cut = sandbox.run(SELF_COPY_EVERY_100, instrument=True, budget=SERIES).evidence
    assert cut.cut is not None and cut.accounting.self_copies[0].count == 6
    found, evidence = diagnose_with_evidence(SELF_COPY_EVERY_100,
                                             sandbox.run(SELF_COPY_EVERY_100), sandbox)
    assert evidence is not None and evidence.cut is None
    assert evidence.accounting.self_copies[0].count == 8
    assert found[0].id == "target-copied-from-itself"
    assert "(8 copies in this run)" in found[0].explanation.en

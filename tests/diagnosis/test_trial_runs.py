"""Fix trials run ahead, concurrently, each program once, and give the diagnoses that trials
run one after another give."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from tutor.diagnosis import reasoning
from tutor.diagnosis.fixes import SERIES
from tutor.diagnosis.reasoning import _next_trials, diagnose
from tutor.diagnosis.trial_runs import Trial, TrialRuns
from tutor.sandbox.models import Limits, RunResult

from .test_fixes_behaviour import shown_text


class Counting:
    """A runner that counts each program's runs and how many were in flight at once; a run
    waits until ``release`` is set (or its cancel event)."""

    def __init__(self, runner: Any = None) -> None:
        self.runner = runner
        self.calls: list[str] = []
        self.options: list[tuple[str, dict[str, Any]]] = []
        self.in_flight = self.most = 0
        self.lock = threading.Lock()
        self.release = threading.Event()
        self.cancelled: list[str] = []
        if runner is not None:
            self.release.set()

    def run(self, code: str, **options: Any) -> RunResult:
        with self.lock:
            self.calls.append(code)
            self.options.append((code, options))
            self.in_flight += 1
            self.most = max(self.most, self.in_flight)
        try:
            cancel = options.get("cancel")
            if self.runner is not None:
                try:
                    return self.runner.run(code, **options)  # type: ignore[no-any-return]
                finally:
                    if cancel is not None and cancel.is_set():
                        self.cancelled.append(code)
            while not self.release.wait(0.01):
                if cancel is not None and cancel.is_set():
                    self.cancelled.append(code)
                    break
            return RunResult(outcome="ok", device="cpu", stdout=code)
        finally:
            with self.lock:
                self.in_flight -= 1

    def devices(self) -> list[str]:
        return ["cpu"]


def test_each_program_runs_once_and_the_ones_ahead_run_together() -> None:
    runner = Counting()
    runs = TrialRuns(runner, "cpu", Limits(), workers=2)
    try:
        runs.ahead([Trial("a"), Trial("b"), Trial("c")])
        for _ in range(200):  # the two workers took the first two
            if runner.most == 2:
                break
            threading.Event().wait(0.01)
        assert runner.most == 2 and sorted(runner.calls) == ["a", "b"]
        runner.release.set()
        assert runs.result(Trial("b")).stdout == "b"
        assert runs.result(Trial("b")).stdout == "b"
        assert runs.result(Trial("a")).stdout == "a"
        assert runs.result(Trial("c")).stdout == "c"
        assert sorted(runner.calls) == ["a", "b", "c"]  # once each
    finally:
        runs.close()


def test_runs_nobody_asked_for_are_stopped_at_the_end() -> None:
    runner = Counting()
    runs = TrialRuns(runner, "cpu", Limits(), workers=2)
    runs.ahead([Trial("needed"), Trial("spare")])
    for _ in range(200):
        if len(runner.calls) == 2:
            break
        threading.Event().wait(0.01)
    runs.close()  # the diagnosis ended without asking for either
    for _ in range(200):
        if len(runner.cancelled) == 2:
            break
        threading.Event().wait(0.01)
    assert sorted(runner.cancelled) == ["needed", "spare"]


class _Cand:
    def __init__(self, confidence: float, *texts: str) -> None:
        from tutor.diagnosis.fixes import Edit, Fix

        self.confidence = confidence
        self.fixes = [Fix((Edit("replace", 1, text),), lambda a, b: None) for text in texts]


def test_what_the_trials_will_run_whatever_they_show() -> None:
    # a confident candidate stops the trials once it works: what comes after it may not run;
    # a candidate below 0.8 does not, so the next candidate's first fix runs either way; a
    # candidate's second fix runs only if its first fails
    order: Any = [_Cand(0.6, "a1", "a2"), _Cand(0.4, "b1"), _Cand(0.9, "c1", "c2"),
                  _Cand(0.5, "d1")]
    assert _next_trials("x = 0\n", order, 0, 0, SERIES) == [
        Trial(f"{p}\n", SERIES) for p in ("a1", "b1", "c1")]
    assert _next_trials("x = 0\n", order, 0, 1, SERIES) == [
        Trial(f"{p}\n", SERIES) for p in ("a2", "b1", "c1")]
    # an error's trials run whole
    assert _next_trials("x = 0\n", order, 2, 1, None) == [Trial("c2\n")]


ZERO_GRAD_AND_RATE = (Path(__file__).parent / "corpus" / "pitfall_manual_no_zero.py").read_text()
"""Two candidates below 0.8 (gradients never cleared; the rate), both tried."""

TWICE = """import torch

w = torch.tensor([1.0], requires_grad=True)
x = torch.tensor([2.0], requires_grad=True)
a = torch.add(w, x)
b = torch.add(w, 1)
y = torch.mul(a, b)
y.backward()
y.backward()
print(w.grad)
"""
"""Three candidates of one error, each fix tried."""

RATE = """import torch
import torch.nn as nn

rnn = nn.RNN(3, 8, batch_first=True)
head = nn.Linear(8, 1)
params = list(rnn.parameters()) + list(head.parameters())
opt = torch.optim.SGD(params, lr=20)
x = torch.randn(16, 5, 3)
y = x.sum(dim=(1, 2)).unsqueeze(1)
for step in range(20):
    opt.zero_grad()
    out, h = rnn(x)
    loss = ((head(out[:, -1]) - y) ** 2).mean()
    loss.backward()
    opt.step()
    print(step, loss.item())
"""
"""A learning rate whose first smaller value is refuted and whose second works."""


@pytest.mark.parametrize("peek_after", [None, 0.0], ids=["idle", "loaded"])
def test_trials_together_give_the_diagnoses_of_trials_in_turn(
        sandbox: Any, monkeypatch: Any, peek_after: float | None) -> None:
    if peek_after is not None:  # every learner's run as slow as on a loaded machine
        monkeypatch.setattr(reasoning, "PEEK_AFTER_MS", peek_after)
    for code in (ZERO_GRAD_AND_RATE, TWICE, RATE):
        result = sandbox.run(code)
        one = Counting(sandbox)
        in_turn = diagnose(code, result, one, workers=1)
        many = Counting(sandbox)
        together = diagnose(code, result, many, workers=3)
        assert in_turn == together
        assert in_turn[0].fix_verified, shown_text(in_turn[0])
        assert one.most == 1
        # the re-run, then each program once, by its budget: a learner's run that took long
        # (a loaded machine) gets a peek at its first passes beside the re-run, the same code
        # with another budget; a program run ahead that a later plan left out is stopped,
        # and runs again only if a trial asks for it after all
        runs = [(code, str(options.get("budget"))) for code, options in many.options]
        again = {run for run in runs if runs.count(run) > 1}
        assert all(runs.count(run) == 2 and run[0] in many.cancelled for run in again), again
        if code is not RATE:
            assert many.most >= 2  # the candidates' trials ran at once


def test_trials_started_from_a_peek_give_the_diagnoses_of_trials_in_turn(
        sandbox: Any, monkeypatch: Any) -> None:
    # a silent bug's re-run beside a peek at its first passes (however short its run): the
    # trials the peek's checks start ahead are those the re-run's checks ask for
    code = (Path(__file__).parent / "corpus" / "pitfall_manual_no_zero.py").read_text()
    result = sandbox.run(code)
    in_turn = diagnose(code, result, sandbox, workers=1)
    monkeypatch.setattr(reasoning, "PEEK_AFTER_MS", 0.0)
    runner = Counting(sandbox)
    peeked = diagnose(code, result, runner, workers=2)
    assert peeked == in_turn and in_turn[0].fix_verified
    peeks = [options for code_run, options in runner.options
             if options.get("budget") == reasoning.PEEK]
    assert len(peeks) == 1  # it peeked, and each trial ran once
    assert len(runner.options) == len({(c, str(o.get("budget"))) for c, o in runner.options})

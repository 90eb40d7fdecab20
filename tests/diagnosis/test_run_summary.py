"""What a run shows when no check found a mistake: built from the evidence alone."""

from __future__ import annotations

from tutor.diagnosis.run_summary import run_summary
from tutor.sandbox.models import (
    BackwardEvidence,
    Evidence,
    NonFiniteEvidence,
    ParamEvidence,
    StepEvidence,
)


def test_the_facts_of_a_run_a_line_each() -> None:
    ev = Evidence(
        backwards=[BackwardEvidence(line=9, name="loss", loss=2.0),
                   BackwardEvidence(line=9, name="loss", loss=2.01)],
        steps=[StepEvidence(line=10, optimizer="opt", kind="SGD", params=["m.w", "m.b"])],
        params=[ParamEvidence(name="m.w", requires_grad=True, changed=True, grad_none=False,
                              in_optimizer=True, reached=True),
                ParamEvidence(name="m.b", requires_grad=True, changed=False, grad_none=False,
                              in_optimizer=True, reached=True)],
    )
    ev.training.nonfinite.append(NonFiniteEvidence(phase="forward", line=7, op="log",
                                                   value="nan"))
    lines = [t.en for t in run_summary(ev)]
    assert lines == [
        "the loss backpropagated on line 9 (`loss`) went from 2 to 2.01 (the last value "
        "recorded): about the same",
        "`opt` steps 2 parameters: 1 of them never changed (`m.b`)",
        "the first nan or inf appeared on line 7",
    ]
    assert all(t.zh for t in run_summary(ev))


def test_a_run_that_trains_nothing_shows_nothing() -> None:
    assert run_summary(Evidence()) == []


def test_one_backward_pass_is_a_value_not_a_trend() -> None:
    """A program that backpropagates once has no trend: "went from -0.79 to -0.79: about the
    same" read as a loss that does not learn."""
    ev = Evidence(backwards=[BackwardEvidence(line=18, name="", loss=-0.7891)])
    assert run_summary(ev)[0].en == (
        "the loss backpropagated on line 18 (the loss) was -0.7891, in one backward pass")

"""What the tutor knows of the learner: where they are and what their last run did. Apart
from the answer models because it needs the run and diagnosis models, which a question asked
from the shell (no step, no run) does not."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from tutor.chat.models import Frozen
from tutor.diagnosis.models import Diagnosis
from tutor.sandbox.models import RunResult


class ChatContext(Frozen):
    """Where the learner is and what just happened, so answers can be about *their* run."""

    lesson_id: str | None = None
    step_id: str | None = None
    code: str = ""
    last_run: RunResult | None = None
    diagnoses: list[Diagnosis] = Field(default_factory=list)
    hints_unlocked: int = Field(
        default=0,
        ge=0,
        description="Hint levels the learner has already seen (persisted, e.g. "
        "ProgressStore.hints_revealed): a solution request unlocks at most one more, and only "
        "while hints_unlocked <= attempts, so asking again in a new process unlocks nothing.",
    )
    attempts: int = Field(default=0, ge=0, description="Runs/submissions of this step so far.")
    expected_values: list[Any] = Field(
        default_factory=list,
        description="Expected values of the step's checks known to the caller (e.g. from the "
        "grader's solution run); never shown, only used to catch leaks.",
    )
    expected_by_expr: dict[str, Any] = Field(
        default_factory=dict,
        description="Expected values by the expression they are the value of (a check's "
        "expr, e.g. 'x.grad'): also caught when stated as that expression's value, even a "
        "small number like 1. or 0.",
    )

    @property
    def step_ref(self) -> str | None:
        if self.lesson_id and self.step_id:
            return f"{self.lesson_id}/{self.step_id}"
        return None

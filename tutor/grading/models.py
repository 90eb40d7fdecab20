"""Verdicts: what grading says about one submission of one step."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from tutor.i18n import Lang, Text
from tutor.sandbox.models import RunResult

CheckStatus = Literal["pass", "fail", "error"]
VerdictStatus = Literal["pass", "fail", "error", "not_gradable"]
"""``pass``: every check passed. ``fail``: ran, some check failed. ``error``: the run did
not finish (exception where none was expected, timeout, crash...). ``not_gradable``: the
submission does not even parse (or may not run, or the reference solution's run did not
finish, so there is no truth to compare with), so it is not scored."""


class CheckResult(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(description="Stable name, e.g. 'value:x.grad'.")
    label: Text = Field(description="What was checked, for people.")
    status: CheckStatus
    points: float
    max_points: float
    message: Text = Field(description="Feedback that helps fix the problem (or confirms).")
    output: str | None = Field(None, description="Capped detail, e.g. got/expected values.")
    output_text: Text | None = Field(
        None, description="``output`` in both languages (``output`` is its English)."
    )

    def output_for(self, lang: Lang) -> str | None:
        """The detail in ``lang``; results made before it was bilingual have ``output`` only."""
        return self.output_text.get(lang) if self.output_text is not None else self.output


class Verdict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    step: str = Field(description="'LESSON/STEP'")
    status: VerdictStatus
    score: float
    max_score: float
    checks: list[CheckResult] = Field(default_factory=list)
    message: Text | None = Field(None, description="Overall message (e.g. why not gradable).")
    run: RunResult | None = Field(None, description="The learner's run, when there was one.")

    @property
    def passed(self) -> bool:
        return self.status == "pass"

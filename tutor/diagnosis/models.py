"""A diagnosis: an error, warning or silent pitfall explained in the learner's terms."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from tutor.i18n import Text

Severity = Literal["error", "warning", "pitfall"]


class Diagnosis(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(description="Catalog id, e.g. 'non-scalar-backward'; 'generic' if unknown.")
    severity: Severity
    title: Text
    explanation: Text = Field(description="What happened and why, with the learner's names.")
    fix: Text = Field(description="A concrete fix in the learner's own names.")
    line: int | None = None
    variable: str | None = Field(None, description="The variable the failing call was made on.")
    details: Text | None = Field(None, description="e.g. '`z` has shape (2,), requires_grad'.")
    lesson_ref: str | None = Field(None, description="'LESSON/STEP' that teaches the concept.")
    generic: bool = Field(False, description="True when no catalog entry fitted.")

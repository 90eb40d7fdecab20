"""A diagnosis: an error, warning or silent pitfall explained in the learner's terms."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from tutor.i18n import Text

Severity = Literal["error", "warning", "pitfall"]
SHOWN_TEXTS = ("title", "explanation", "fix", "details", "fix_check", "tell_apart")
"""The fields of a diagnosis a face shows as text (and ``chain``, a list of them)."""


class Diagnosis(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(description="Catalog id, e.g. 'non-scalar-backward'; 'generic' if unknown.")
    severity: Severity
    title: Text
    explanation: Text = Field(description="What happened and why, with the learner's names.")
    fix: Text = Field(description="A concrete fix in the learner's own names.")
    line: int | None = None
    variable: str | None = Field(default=None,
                                 description="The variable the failing call was made on.")
    details: Text | None = Field(default=None,
                                 description="e.g. '`z` has shape (2,), requires_grad'.")
    lesson_ref: str | None = Field(default=None,
                                   description="'LESSON/STEP' that teaches the concept.")
    generic: bool = Field(default=False, description="True when no catalog entry fitted.")
    root_line: int | None = Field(
        default=None, description="The line that causes the problem (may differ from `line`, "
        "where it shows); from the evidence of an instrumented re-run and the source's data flow.")
    chain: list[Text] = Field(
        default_factory=list, description="The evidence that leads to the root cause, in order.")
    fix_verified: bool | None = Field(
        default=None, description="True: the concrete fix was applied and re-run and it worked.")
    fix_failed: bool = Field(
        default=False, description="True: the concrete fix was applied and re-run and the "
        "program still did not work (the chain's last step says what was tried).")
    fix_check: Text | None = Field(default=None,
                                   description="What the re-run of the fixed program showed.")
    patch: str | None = Field(default=None, description="The tried fix as a unified diff.")
    alternatives: list[str] = Field(
        default_factory=list, description="Other candidate causes (ids), most likely first.")
    tell_apart: Text | None = Field(default=None,
                                    description="How to tell this cause from the alternatives.")

    @property
    def root_elsewhere(self) -> int | None:
        """The root-cause line when the problem shows on another line (``line``): a face
        names both, the root first."""
        root = self.root_line
        return root if self.line and root and root != self.line else None

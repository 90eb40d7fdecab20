"""A candidate root cause found by a check, and what the checks read: the instrumented
re-run, its evidence, the source's data flow and the error."""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field

from tutor.diagnosis.fixes import Fix
from tutor.diagnosis.flow import Flow
from tutor.i18n import Text
from tutor.sandbox.models import ErrorInfo, Evidence, RunResult


@dataclass
class Candidate:
    id: str
    root_line: int
    confidence: float
    steps: list[tuple[str, dict[str, object]]] = field(default_factory=list)
    fixes: list[Fix] = field(default_factory=list)
    fill: dict[str, object] = field(default_factory=dict)
    tell_apart: Text | None = None
    direction: Text | None = None
    """What to do, in words without code, when no concrete fix was verified: the evidence
    names the cause, and no change of the learner's code was shown to fix it."""
    pinned: bool = False
    """The evidence pins this cause by itself (its chain is the proof: the op that took the
    batch away, the sample made without it), so it is shown before the message's own
    diagnosis even where no change was tried or none worked."""
    only_if_tried: bool = False
    """Its claim is established only by its change working (a value said to carry another
    network's graph: detaching it must fix the run): shown, as the cause or as an
    alternative, only where the trial of one of its fixes worked."""


def at_failing_line(ctx: Ctx, cid: str, step: str, fixes: list[Fix | None],
                    confidence: float = 0.8) -> list[Candidate]:
    """A candidate whose root is the failing line itself (the message names the mistake and
    the line makes it), with the fixes that fit."""
    line = ctx.fail_line or 0
    return [Candidate(cid, line, confidence, [(step, {"line": line})],
                      [f for f in fixes if f is not None], {"line": line})]


@dataclass
class Ctx:
    code: str
    flow: Flow
    result: RunResult  # the instrumented re-run
    evidence: Evidence
    error: ErrorInfo | None
    refuted: set[str] = field(default_factory=set)
    """Diagnoses the evidence shows wrong (a static rule fired on the program's form, the
    re-run saw otherwise): the checks add them, the reasoning drops them."""

    @property
    def message(self) -> str:
        return self.error.message if self.error is not None else ""

    @property
    def fail_line(self) -> int | None:
        if self.error is None:
            return None
        frames = self.error.traceback
        return frames[-1].line if frames else self.error.line

    def failing_statement(self) -> tuple[int, ast.stmt | None]:
        """The failing line (0 when unknown) and the statement on it."""
        line = self.fail_line or 0
        return line, self.flow.statement_at(line)

    def failing_on(self, marker: str) -> tuple[int, ast.stmt] | None:
        """The failing line and its statement where the error's message says ``marker``;
        None where it does not (the check does not apply) or no statement is there."""
        if marker not in self.message:
            return None
        line, stmt = self.failing_statement()
        return (line, stmt) if stmt is not None else None

    def trace_lines(self) -> list[int]:
        return [f.line for f in self.error.traceback] if self.error else []


Check = Callable[[Ctx], list[Candidate]]
"""A check: the candidate root causes it finds in a program's run (none where it does not
apply). Each check module lists its checks in ``EXCEPTION_CHECKS`` (they explain an exception)
and ``SILENT_CHECKS`` (they find a silent bug in a run without one); order within a module is
the order ties are ranked in."""

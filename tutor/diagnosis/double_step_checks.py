"""An optimizer stepped twice for one backward(): two ``step()`` calls with no backward()
between them apply the same gradients twice (``scaler.step(opt)`` already steps the optimizer,
and an ``opt.step()`` after it steps again, past the scaler's inf/NaN check). The run shows
it: consecutive steps of one optimizer after the same count of backward() passes, on two
lines, pass after pass. The change tried removes the plain ``opt.step()`` (the scaler's step,
where there is one, is the one to keep); it is kept where the optimizer then steps once per
backward()."""

from __future__ import annotations

import ast

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import Edit, Expect, Fix
from tutor.diagnosis.flow import call_name, text
from tutor.i18n import T, Text
from tutor.sandbox.models import Evidence, RunResult, StepEvidence

MIN_REPEATS = 2
"""Passes that step twice before it is a pattern, not one odd pass."""


def _key(step: StepEvidence) -> tuple[str, str | None]:
    return step.optimizer, step.where


def _doubled(ev: Evidence) -> dict[tuple[str, str | None], list[tuple[int, int]]]:
    """Optimizer -> the (first line, second line) of each pair of its steps with no
    backward() between them."""
    out: dict[tuple[str, str | None], list[tuple[int, int]]] = {}
    last: dict[tuple[str, str | None], StepEvidence] = {}
    for step in ev.steps:
        key = _key(step)
        before = last.get(key)
        if before is not None and before.after_backward == step.after_backward and \
                step.after_backward > 0 and before.line is not None and step.line is not None \
                and before.line != step.line and before.moved and step.moved:
            out.setdefault(key, []).append((before.line, step.line))
        last[key] = step
    return {k: v for k, v in out.items() if len(v) >= MIN_REPEATS}


def steps_once(optimizer: str) -> Expect:
    def expect(original: RunResult, fixed: RunResult) -> Text | None:
        if fixed.outcome != "ok" or fixed.evidence is None or not fixed.evidence.steps:
            return None
        if any(k[0] == optimizer for k in _doubled(fixed.evidence)):
            return None
        if not any(s.optimizer == optimizer for s in fixed.evidence.steps):
            return None
        return T(f"with this change `{optimizer}` steps once per backward()",
                 f"改动后 `{optimizer}` 每次 backward() 只执行一次 step")
    return expect


def _plain_step(ctx: Ctx, line: int, optimizer: str) -> ast.Expr | None:
    """The statement ``optimizer.step()`` alone on ``line``."""
    stmt = ctx.flow.statement_at(line)
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and \
            call_name(stmt.value) == "step" and isinstance(stmt.value.func, ast.Attribute) and \
            text(stmt.value.func.value) == optimizer and stmt.lineno == stmt.end_lineno:
        return stmt
    return None


def check_stepped_twice(ctx: Ctx) -> list[Candidate]:
    if ctx.error is not None:
        return []
    out = []
    for (optimizer, _where), pairs in _doubled(ctx.evidence).items():
        first, second = pairs[0]
        # the plain step goes; of two plain ones, the second
        extra = next((line for line in (second, first)
                      if _plain_step(ctx, line, optimizer) is not None), None)
        if extra is None:
            continue
        kept = first if extra == second else second
        facts: dict[str, object] = {"line": extra, "optimizer": optimizer, "count": len(pairs),
                                    "before_line": kept}
        fix = Fix((Edit("delete", extra),), steps_once(optimizer), T(
            f"remove the second step on line {extra}: the step on line {kept} already applies "
            "these gradients",
            f"删除第 {extra} 行多出的 step：第 {kept} 行的 step 已经用过这些梯度"))
        out.append(Candidate("optimizer-stepped-twice", extra, 0.8, [
            ("stepped-twice", facts)], [fix], facts))
    return out[:1]


EXCEPTION_CHECKS: tuple[Check, ...] = ()
SILENT_CHECKS: tuple[Check, ...] = (check_stepped_twice,)

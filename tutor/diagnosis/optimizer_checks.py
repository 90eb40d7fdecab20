"""An optimizer built anew inside the training loop: every step is its first, so an optimizer
with state (Adam's moments, momentum) forgets it at each step and never behaves as itself.
The run says each step was an optimizer's first; the source says which loop builds it. The
change tried builds it once, before that loop."""

from __future__ import annotations

import ast

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import Edit, Fix
from tutor.i18n import T, Text
from tutor.sandbox.models import RunResult

STATELESS = frozenset({"SGD"})
"""Optimizers whose plain step keeps no state (SGD without momentum: the run cannot tell its
momentum, so it is left out): rebuilding them changes nothing."""
MIN_FRESH = 3


def _fresh_steps(result: RunResult) -> int:
    ev = result.evidence
    return sum(1 for s in ev.steps if s.fresh) if ev is not None else 0


def state_kept(original: RunResult, fixed: RunResult) -> Text | None:
    """The fixed run's optimizer keeps its state: only its first step is a fresh one."""
    ev = fixed.evidence
    if fixed.outcome != "ok" or ev is None or len(ev.steps) < MIN_FRESH or \
            _fresh_steps(fixed) > 1:
        return None
    return T(f"with this change one optimizer takes all {len(ev.steps)} recorded steps and "
             f"keeps its state (before: {_fresh_steps(original)} steps each by a new one)",
             f"改动后由同一个优化器完成记录到的全部 {len(ev.steps)} 步并保留它的状态"
             f"（改动前：{_fresh_steps(original)} 步各由一个新的优化器完成）")


def check_optimizer_rebuilt(ctx: Ctx) -> list[Candidate]:
    ev, flow = ctx.evidence, ctx.flow
    if ctx.error is not None:
        return []
    fresh = [s for s in ev.steps if s.fresh]
    if len(fresh) < MIN_FRESH or len(fresh) < len(ev.steps) or fresh[0].kind in STATELESS:
        return []
    name = fresh[0].optimizer
    for stmt, built, _ in flow.optimizers():
        loops = flow.loops_of(stmt)
        if built != name or not loops:
            continue
        loop = loops[0]
        # the steps must run in that loop: the optimizer is built where it is used
        steps = [c for c in flow.calls_named("step") if isinstance(c.func, ast.Attribute)
                 and c.lineno >= loop.lineno and c.lineno <= (loop.end_lineno or loop.lineno)]
        if not steps or stmt.lineno != stmt.end_lineno:
            continue
        facts: dict[str, object] = {"line": stmt.lineno, "optimizer": name,
                                    "count": len(fresh), "train_line": loop.lineno,
                                    "detail": fresh[0].kind}
        return [Candidate("optimizer-rebuilt", stmt.lineno, 0.85, [("steps-fresh", facts)], [Fix(
            (Edit("move_before", stmt.lineno, to=loop.lineno),), state_kept, T(
                f"build `{name}` once, before the loop of line {loop.lineno}: move line "
                f"{stmt.lineno} above it",
                f"在第 {loop.lineno} 行的循环之前只创建一次 `{name}`：把第 {stmt.lineno} 行移到"
                "它上面"))], facts)]
    return []


EXCEPTION_CHECKS: tuple[Check, ...] = ()
SILENT_CHECKS: tuple[Check, ...] = (check_optimizer_rebuilt,)

"""An optimizer built anew inside the training loop: every step is its first, so an optimizer
with state (Adam's moments, momentum) forgets it at each step and never behaves as itself.
The run says each step was an optimizer's first; the source says which loop builds it. The
change tried builds it once, before that loop."""

from __future__ import annotations

import ast

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import Edit, Fix, indent_of
from tutor.diagnosis.flow import text
from tutor.diagnosis.schedule_checks import learning_rates
from tutor.diagnosis.verify import runs_clean
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


def rate_follows(original: RunResult, fixed: RunResult) -> Text | None:
    """The fixed run's steps use learning rates that change, where the original's did not."""
    before, after = learning_rates(original), learning_rates(fixed)
    if fixed.outcome != "ok" or len(set(after)) < 2 or len(set(before)) > 1:
        return None
    return T(f"with this change the steps use the rates the program sets: from {after[0]:.3g} "
             f"to {after[-1]:.3g} over the recorded steps (before: {before[0]:.3g} at every "
             "step)" if before else "with this change the steps use the rates the program sets",
             f"改动后每一步使用程序设置的学习率：记录到的步骤中从 {after[0]:.3g} 变为 "
             f"{after[-1]:.3g}（改动前每一步都是 {before[0]:.3g}）" if before else
             "改动后每一步使用程序设置的学习率")


def check_rate_set_as_attribute(ctx: Ctx) -> list[Candidate]:
    """``optimizer.lr = x``: an optimizer reads its hyper-parameters from each of its
    ``param_groups``; an attribute of the same name on the optimizer is never read. The run
    found such an attribute on an optimizer that stepped; the assignment is rewritten to set
    every group's value, and tried."""
    ev, flow = ctx.evidence, ctx.flow
    if ctx.error is not None or not ev.training.misplaced:
        return []
    for stmt in flow.statements:
        if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1 or \
                stmt.lineno != stmt.end_lineno:
            continue
        target = stmt.targets[0]
        if not isinstance(target, ast.Attribute) or target.attr not in ev.training.misplaced:
            continue
        owner, attr = text(target.value), target.attr
        value = text(stmt.value)
        pad = indent_of(flow.line(stmt.lineno))
        new = (f"{pad}for group in {owner}.param_groups:\n"
               f"{pad}    group[{attr!r}] = {value}")
        facts: dict[str, object] = {"line": stmt.lineno, "optimizer": owner, "param": attr,
                                    "expr": value}
        return [Candidate("hyperparameter-as-attribute", stmt.lineno, 0.85,
                          [("attribute-unread", facts)], [Fix(
                              (Edit("replace", stmt.lineno, new),),
                              rate_follows if attr == "lr" else runs_clean, T(
                                  f"set `{attr}` in each of `{owner}.param_groups` on line "
                                  f"{stmt.lineno}, where the optimizer reads it",
                                  f"第 {stmt.lineno} 行在 `{owner}.param_groups` 的每个组里设置 "
                                  f"`{attr}`：优化器从那里读取它"))], facts)]
    return []


EXCEPTION_CHECKS: tuple[Check, ...] = ()
SILENT_CHECKS: tuple[Check, ...] = (check_optimizer_rebuilt, check_rate_set_as_attribute)

"""Gradient accumulation that sums where it means to average: several ``backward()`` passes
of one line add into ``.grad`` before each ``step()``, and the loss of each is not divided
by their number, so the step applies k batches' gradients at once, k times the step of one
batch of the same total size. The run says how many passes each step took; the change tried
divides the loss that line backpropagates by that number, and it is kept only where the
step's update then shrinks by about that factor (an optimizer that normalises its step,
Adam, barely changes: there the sum does little harm and nothing is said)."""

from __future__ import annotations

import ast

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import Edit, Expect, Fix, postfix, replace_node
from tutor.diagnosis.flow import call_name
from tutor.i18n import T, Text
from tutor.sandbox.models import Evidence, RunResult, StepEvidence


def _accumulating(result: RunResult) -> list[StepEvidence]:
    ev = result.evidence
    return [s for s in ev.steps if s.passes >= 2 and s.passes_line is not None
            and s.cleared == 0 and s.moved] if ev is not None else []


def averaged(passes: int) -> Expect:
    """The fixed run's accumulating steps move the weights at most about ``1 / passes`` as
    far as before (half that factor's margin)."""
    def expect(original: RunResult, fixed: RunResult) -> Text | None:
        before, after = _accumulating(original), _accumulating(fixed)
        if fixed.outcome != "ok" or not before or not after:
            return None
        was, now = before[0].moved or 0.0, after[0].moved or 0.0
        if not now or now > was * 2 / passes:
            return None
        return T(f"with this change a step after {passes} passes moves the weights "
                 f"{now:.3g} (relative) instead of {was:.3g}: the average of the batches, not "
                 "their sum", f"改动后累积 {passes} 次之后的一步对权重的相对改变是 {now:.3g}，"
                 f"而不是 {was:.3g}：用的是这些批次的平均，而不是总和")
    return expect


def _steps_on_a_condition(ctx: Ctx, step: StepEvidence, backward: ast.stmt) -> bool:
    """The step runs under an ``if`` in the loop that runs the backward pass (``if (i + 1)
    % k == 0: opt.step()``): the shape of accumulation, not of a step after several terms."""
    at = ctx.flow.statement_at(step.line) if step.line is not None else None
    if at is None:
        return False
    loops = ctx.flow.loops_of(backward)
    return any(isinstance(a, ast.If) and any(loop in ctx.flow.ancestors(a) for loop in loops)
               for a in ctx.flow.ancestors(at))


def check_summed_accumulation(ctx: Ctx) -> list[Candidate]:
    if ctx.error is not None:
        return []
    steps = _accumulating(ctx.result)
    if not steps:
        return []
    step = steps[0]
    passes, line = step.passes, step.passes_line
    stmt = ctx.flow.statement_at(line) if line is not None else None
    if line is None or stmt is None:
        return []
    owners = [c.func.value for c in ast.walk(stmt) if isinstance(c, ast.Call) and call_name(
        c) == "backward" and isinstance(c.func, ast.Attribute)]
    if not owners or any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Div)
                         for n in ast.walk(owners[0])):
        return []
    loss = owners[0]
    if not _steps_on_a_condition(ctx, step, stmt):
        return []  # several losses of one step (tasks, terms) are meant to add up
    made = ctx.flow.assigned_before(loss.id, line, stmt) if isinstance(loss, ast.Name) else None
    value = ctx.flow.value_of(made) if made is not None else None
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Div):
        return []  # already divided where it is made
    new = f"({postfix(loss, '')} / {passes})"
    edit = replace_node(ctx.code, loss, new)
    if edit is None:
        return []
    facts: dict[str, object] = {"line": line, "count": passes, "name": postfix(loss, ""),
                                "optimizer": step.optimizer}
    return [Candidate("accumulation-summed", line, 0.75, [("passes-summed", facts)], [Fix(
        (edit,), averaged(passes), T(
            f"divide the loss by the number of accumulated passes on line {line}: "
            f"`{new}.backward()`",
            f"第 {line} 行把损失除以累积的次数：`{new}.backward()`"))], facts)]


def _carried(ev: Evidence) -> list[tuple[str, int, int]]:
    """(optimizer, backward line, steps) for each optimizer whose every step after its first
    applied gradients left from before its previous step (:attr:`StepEvidence.carried`):
    nothing cleared them between its steps, whatever the loop looks like (a trainer's
    method, a GAN's two optimizers)."""
    out = []
    for name in dict.fromkeys(s.optimizer for s in ev.steps):
        later = [s for s in ev.steps if s.optimizer == name][1:]
        lines = {s.carried for s in later}
        if len(later) >= 2 and len(lines) == 1 and None not in lines:
            out.append((name, later[0].carried or 0, len(later) + 1))
    return out


def steps_cleared(name: str) -> Expect:
    """The fixed run's optimizer ``name`` no longer steps on gradients of earlier steps."""
    def expect(original: RunResult, fixed: RunResult) -> Text | None:
        if fixed.outcome != "ok" or fixed.evidence is None or original.evidence is None:
            return None
        if any(o == name for o, _, _ in _carried(fixed.evidence)) or not any(
                s.optimizer == name for s in fixed.evidence.steps):
            return None
        return T(f"with this change each step of `{name}` applies the gradients of its own "
                 "pass, not the sum of every pass before it",
                 f"改动后 `{name}` 的每一步只使用本次的梯度，而不是之前所有梯度的总和")
    return expect


def check_steps_never_cleared(ctx: Ctx) -> list[Candidate]:
    """An optimizer stepping on gradients that nothing clears between its steps, read off
    the run (the backward() after each step found its parameters' gradients still there):
    clearing them right before the backward() that feeds its next step is tried."""
    if ctx.error is not None:
        return []
    out = []
    for name, line, count in _carried(ctx.evidence):
        stmt = ctx.flow.statement_at(line)
        if stmt is None or not all(part.isidentifier() for part in name.split(".")):
            continue
        if any(call_name(c) == "step" for loop in ctx.flow.loops_of(stmt)
               for c in ast.walk(loop) if isinstance(c, ast.Call)):
            continue  # one loop holds the backward() and the step: check_zero_grad reads it
        edit = Edit("insert_before", stmt.lineno, f"{name}.zero_grad()")
        facts: dict[str, object] = {"line": line, "optimizer": name, "count": count}
        out.append(Candidate("optimizer-grads-never-cleared", line, 0.7, [
            ("grads-carried", facts)], [Fix((edit,), steps_cleared(name), T(
                f"clear them before the backward() on line {line}: `{name}.zero_grad()`",
                f"在第 {line} 行的 backward() 之前清零：`{name}.zero_grad()`"))], facts))
    return out


EXCEPTION_CHECKS: tuple[Check, ...] = ()
SILENT_CHECKS: tuple[Check, ...] = (check_summed_accumulation, check_steps_never_cleared)

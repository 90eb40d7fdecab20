"""Errors of ``GradScaler``'s protocol. Each message is raised by one documented rule of mixed
precision (the AMP recipe in torch's docs), so the cause is the program's part in that rule,
found in its source, and the change the rule asks for is tried before it is shown:

- "Attempting to unscale FP16 gradients": the scaler keeps float32 weights and lets
  ``autocast`` compute in half precision; a line made trainable parameters float16 (``.half()``,
  ``.to(torch.float16)``, ``dtype=torch.float16``). Tried: that conversion taken out.
- "No inf checks were recorded prior to update": ``scaler.update()`` with no
  ``scaler.step(opt)`` since the last one: the optimizer was stepped by itself. Tried:
  ``scaler.step(opt)`` in place of ``opt.step()``.
- "No inf checks were recorded for this optimizer": ``scaler.step(opt)`` for an optimizer none
  of whose parameters got a gradient from this pass (a part of the model the loss reaches only
  on some steps). Tried: step it only where its parameters have gradients.
- "unscale_() has already been called on this optimizer since the last update()": ``unscale_``
  on every pass while the scaler steps and updates on some (gradient accumulation). Tried: the
  ``unscale_`` and the clipping after it moved into the block that steps.
"""

from __future__ import annotations

import ast

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import Edit, Fix, indent_of, replace_nodes
from tutor.diagnosis.flow import call_name, text
from tutor.diagnosis.verify import runs_clean
from tutor.i18n import T, Text
from tutor.sandbox.models import RunResult

HALF = frozenset({"torch.float16", "torch.half"})
CLIPS = frozenset({"clip_grad_norm_", "clip_grad_value_"})
MAX_SITES = 3
"""Conversions tried one by one; a program that casts more is tried with all of them out."""


def _receiver(call: ast.Call) -> ast.expr | None:
    return call.func.value if isinstance(call.func, ast.Attribute) else None


def _inside_autocast(ctx: Ctx, node: ast.AST) -> bool:
    return any(isinstance(a, ast.With) and any(call_name(i.context_expr) == "autocast"
                                               for i in a.items)
               for a in ctx.flow.ancestors(node)) or any(
        isinstance(a, ast.Call) and call_name(a) == "autocast" for a in ctx.flow.ancestors(node))


def _half_casts(ctx: Ctx) -> list[tuple[ast.Call, str]]:
    """Each call that makes something float16 and what it becomes without the cast:
    ``m.half()`` -> ``m``, ``m.to(torch.float16)`` -> ``m``, ``nn.Linear(4, 2,
    dtype=torch.float16)`` -> ``nn.Linear(4, 2)``."""
    out: list[tuple[ast.Call, str]] = []
    for call in ctx.flow.calls:
        owner = _receiver(call)
        name = call_name(call)
        halves = [a for a in call.args if text(a) in HALF]
        dtype = next((k for k in call.keywords if k.arg in ("dtype", "torch_dtype")
                      and text(k.value) in HALF), None)
        plain = name == "half" and not call.args
        converted = name in ("to", "type") and bool(halves or dtype) and \
            len(call.args) == len(halves) and (dtype is None or len(call.keywords) == 1)
        if owner is not None and (plain or converted):
            out.append((call, text(owner)))
        elif dtype is not None and not _inside_autocast(ctx, call):
            kept = [text(a) for a in call.args] + [
                f"{k.arg}={text(k.value)}" if k.arg else f"**{text(k.value)}"
                for k in call.keywords if k is not dtype]
            out.append((call, f"{text(call.func)}({', '.join(kept)})"))
    return out


def _uncast(ctx: Ctx, sites: list[tuple[ast.Call, str]]) -> tuple[Edit, ...] | None:
    """One edit per line, every cast of that line taken out (outermost casts only)."""
    by_line: dict[int, list[tuple[ast.Call, str]]] = {}
    for call, new in sites:
        by_line.setdefault(call.lineno, []).append((call, new))
    edits = []
    for changes in by_line.values():
        outer = [(c, n) for c, n in changes if not any(
            o is not c and o.col_offset <= c.col_offset and c.end_col_offset is not None
            and o.end_col_offset is not None and c.end_col_offset <= o.end_col_offset
            for o, _ in changes)]
        edit = replace_nodes(ctx.code, list(outer))
        if edit is None:
            return None
        edits.append(edit)
    return tuple(edits)


def check_fp16_weights(ctx: Ctx) -> list[Candidate]:
    """A float16 gradient the scaler would unscale: trainable weights were made float16."""
    if "Attempting to unscale FP16 gradients" not in ctx.message:
        return []
    fail = ctx.fail_line or 0
    sites = _half_casts(ctx)
    if not sites:
        return []
    # a module's or parameter's cast (built or assigned once) before a cast of data in a
    # forward; the trial tells which one made the float16 gradients
    def in_forward(site: tuple[ast.Call, str]) -> bool:
        function = ctx.flow.function_at(site[0].lineno)
        return function is not None and function.name == "forward"

    sites.sort(key=in_forward)
    out = []
    for call, new in sites[:MAX_SITES]:
        line = call.lineno
        edits = _uncast(ctx, [(call, new)])
        fixes = []
        if edits:
            fixes.append(Fix(edits, runs_clean, T(
                f"keep the weights in float32 on line {line} (`{new}`): `autocast` runs the "
                "operations in half precision, and the scaler needs float32 gradients",
                f"第 {line} 行让权重保持 float32（`{new}`）：`autocast` 会以半精度执行运算，"
                "而 scaler 需要 float32 的梯度")))
        if len(sites) > 1:
            every = _uncast(ctx, sites)
            if every:
                lines = ", ".join(str(n) for n in sorted({c.lineno for c, _ in sites}))
                fixes.append(Fix(every, runs_clean, T(
                    f"take out the float16 casts on lines {lines} and leave the precision to "
                    "`autocast`; the scaler needs float32 gradients",
                    f"去掉第 {lines} 行的 float16 转换，由 `autocast` 决定精度；scaler 需要 "
                    "float32 的梯度")))
        fill: dict[str, object] = {"line": line, "fail_line": fail, "expr": text(call),
                                   "name": new}
        out.append(Candidate("amp-fp16-weights", line, 0.85, [("fp16-cast", fill)], fixes,
                             fill))
    return out


def _scaler_call(ctx: Ctx, marker: str, method: str) -> tuple[int, ast.Call, str] | None:
    """Where the message says ``marker``: the failing line, its call of ``method`` on the
    scaler, and the scaler's name."""
    if marker not in ctx.message:
        return None
    line, stmt = ctx.failing_statement()
    for node in ast.walk(stmt) if stmt is not None else ():
        if isinstance(node, ast.Call) and call_name(node) == method and \
                (owner := _receiver(node)) is not None:
            return line, node, text(owner)
    return None


def _method_calls(ctx: Ctx, method: str) -> list[tuple[ast.Expr, str, ast.Call]]:
    """Each statement ``owner.method(...)``: the statement, the owner's source, the call."""
    out = []
    for stmt in ctx.flow.statements:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and call_name(
                stmt.value) == method and isinstance(stmt.value.func, ast.Attribute):
            out.append((stmt, text(stmt.value.func.value), stmt.value))
    return out


def _calls_on(ctx: Ctx, owner: str, method: str) -> list[ast.Expr]:
    """The statements ``owner.method(...)``."""
    return [stmt for stmt, on, _ in _method_calls(ctx, method) if on == owner]


def check_update_without_step(ctx: Ctx) -> list[Candidate]:
    """``scaler.update()`` after an ``opt.step()`` the scaler did not make."""
    found = _scaler_call(ctx, "No inf checks were recorded prior to update", "update")
    if found is None:
        return []
    fail, update, scaler = found
    scope = ctx.flow.scope_of(update)
    plain = [(stmt, on) for stmt, on, call in _method_calls(ctx, "step") if not call.args
             and on != scaler and ctx.flow.scope_of(stmt) is scope and stmt.lineno < fail]
    out = []
    for stmt, opt in plain[-1:]:
        new = f"{scaler}.step({opt})"
        line = stmt.lineno
        edit = Edit("replace", line, indent_of(ctx.flow.line(line)) + new)
        fill: dict[str, object] = {"line": line, "fail_line": fail, "optimizer": opt,
                                   "name": scaler}
        out.append(Candidate("amp-step-bypassed", line, 0.9, [("step-bypassed", fill)], [
            Fix((edit,), runs_clean, T(
                f"step through the scaler on line {line}: `{new}` (it unscales the gradients, "
                "skips the step when they hold inf or NaN, and records that for `update()`)",
                f"第 {line} 行通过 scaler 执行 step：`{new}`（它会先还原梯度的缩放，梯度含 inf 或 "
                "NaN 时跳过这一步，并把结果记录下来供 `update()` 使用）"))], fill))
    return out


def still_steps(original: RunResult, fixed: RunResult) -> Text | None:
    """The fixed program runs to its end and some step of it moved parameters."""
    done = runs_clean(original, fixed)
    steps = fixed.evidence.steps if fixed.evidence is not None else []
    if done is None or not any(s.moved for s in steps):
        return None
    return done


def check_optimizer_without_grads(ctx: Ctx) -> list[Candidate]:
    """``scaler.step(opt)`` where none of ``opt``'s parameters got a gradient this pass."""
    found = _scaler_call(ctx, "No inf checks were recorded for this optimizer", "step")
    if found is None or not found[1].args:
        return []
    fail, call, _ = found
    stmt = ctx.flow.statement_at(fail)
    if not isinstance(stmt, ast.Expr) or stmt.lineno != stmt.end_lineno:
        return []
    opt = text(call.args[0])
    pad = indent_of(ctx.flow.line(fail))
    guard = (f'if any(p.grad is not None for group in {opt}.param_groups '
             f'for p in group["params"]):')
    edit = Edit("replace", fail, f"{pad}{guard}\n{pad}    {ctx.flow.line(fail).strip()}")
    fill: dict[str, object] = {"line": fail, "optimizer": opt}
    # the claim (its parameters get gradients on some passes, not on this one) holds only
    # where the guarded program runs and still steps: a loss that reaches no parameter at
    # all (rebuilt as a new tensor) would run with every step skipped
    return [Candidate("amp-optimizer-without-grads", fail, 0.85, [("no-grads-to-step", fill)], [
        Fix((edit,), still_steps, T(
            f"on line {fail} step `{opt}` through the scaler only when some of its parameters "
            "got a gradient in this pass",
            f"第 {fail} 行只在 `{opt}` 的参数在这一轮得到梯度时才通过 scaler 执行 step"))], fill,
        only_if_tried=True)]


def check_unscaled_twice(ctx: Ctx) -> list[Candidate]:
    """``scaler.unscale_(opt)`` on every pass, the step and update only on some."""
    found = _scaler_call(ctx, "unscale_() has already been called on this optimizer",
                         "unscale_")
    if found is None:
        return []
    fail, unscale, scaler = found
    here = ctx.flow.statement_at(fail)
    step = next((s for s in _calls_on(ctx, scaler, "step")
                 if ctx.flow.scope_of(s) is ctx.flow.scope_of(unscale) and s.lineno > fail),
                None)
    if here is None or step is None:
        return []
    block = next((a for a in ctx.flow.ancestors(step) if isinstance(a, ast.If)), None)
    if block is None or block in ctx.flow.ancestors(here):
        return []  # the step is no more conditional than the unscale_
    moved = [here]
    after = ctx.flow.statement_at(here.end_lineno + 1) if here.end_lineno else None
    while after is not None and isinstance(after, ast.Expr) and isinstance(after.value, ast.Call) \
            and call_name(after.value) in CLIPS and after.lineno == after.end_lineno:
        moved.append(after)
        after = ctx.flow.statement_at(after.lineno + 1)
    if any(s.lineno != s.end_lineno for s in moved):
        return []
    pad = indent_of(ctx.flow.line(step.lineno))
    body = "\n".join(pad + ctx.flow.line(s.lineno).strip() for s in moved)
    edits = [Edit("delete", s.lineno) for s in moved]
    edits.append(Edit("replace", step.lineno, f"{body}\n{ctx.flow.line(step.lineno)}"))
    what = "`unscale_` and the clipping after it" if len(moved) > 1 else "`unscale_`"
    what_zh = "`unscale_` 及其后的梯度裁剪" if len(moved) > 1 else "`unscale_`"
    fill: dict[str, object] = {"line": fail, "step_line": step.lineno,
                               "condition": text(block.test), "name": scaler}
    return [Candidate("amp-unscaled-twice", fail, 0.9, [("unscale-every-pass", fill)], [
        Fix(tuple(edits), runs_clean, T(
            f"move {what} from line {fail} into the block that steps, before line "
            f"{step.lineno}: unscale once per update, right before the step",
            f"把第 {fail} 行的 {what_zh} 移到执行 step 的代码块里、第 {step.lineno} 行之前："
            "每次更新只还原一次缩放，紧挨着 step"))], fill)]


UPDATE_MISSED = ("unscale_() has already been called on this optimizer since the last update()",
                 "step() has already been called since the last update()")


def check_update_skipped(ctx: Ctx) -> list[Candidate]:
    """The scaler unscaled or stepped again with no ``update()`` since: the program never
    calls ``update()``, or a ``continue`` that skips a bad step skips the ``update()`` too.
    ``update()`` is where the scaler starts its next iteration; it is added where it was
    missed."""
    marker = next((m for m in UPDATE_MISSED if m in ctx.message), None)
    found = None
    for method in ("unscale_", "step"):
        found = found or (_scaler_call(ctx, marker, method) if marker else None)
    if found is None:
        return []
    fail, call, scaler = found
    steps = _calls_on(ctx, scaler, "step")
    updates = _calls_on(ctx, scaler, "update")
    loop = next(iter(ctx.flow.loops_of(call)), None)
    if loop is None or not steps:
        return []
    fill: dict[str, object] = {"fail_line": fail, "name": scaler}
    if not updates:
        step = steps[-1]
        fill.update(line=step.lineno)
        return [Candidate("amp-update-missing", step.lineno, 0.9, [("update-never", fill)], [
            Fix((Edit("insert_after", step.lineno, f"{scaler}.update()"),), runs_clean, T(
                f"call `{scaler}.update()` after the step on line {step.lineno}",
                f"在第 {step.lineno} 行的 step 之后调用 `{scaler}.update()`"))], fill)]
    update = updates[0]
    skip = next((n for n in ast.walk(loop) if isinstance(n, ast.Continue)
                 and fail <= n.lineno < update.lineno
                 and next(iter(ctx.flow.loops_of(n)), None) is loop), None)
    if skip is None:
        return []
    guard = next((a for a in ctx.flow.ancestors(skip) if isinstance(a, ast.If)), None)
    fill.update(line=skip.lineno, step_line=update.lineno,
                condition=text(guard.test) if guard is not None else "")
    return [Candidate("amp-update-skipped", skip.lineno, 0.9, [("update-skipped", fill)], [
        Fix((Edit("insert_before", skip.lineno, f"{scaler}.update()"),), runs_clean, T(
            f"call `{scaler}.update()` before the `continue` on line {skip.lineno}, so a "
            "skipped step still ends the scaler's iteration",
            f"在第 {skip.lineno} 行的 `continue` 之前调用 `{scaler}.update()`，让跳过的这一步也"
            "结束 scaler 的这一轮"))], fill)]


EXCEPTION_CHECKS: tuple[Check, ...] = (check_fp16_weights, check_update_without_step,
                                       check_optimizer_without_grads, check_unscaled_twice,
                                       check_update_skipped)
SILENT_CHECKS: tuple[Check, ...] = ()

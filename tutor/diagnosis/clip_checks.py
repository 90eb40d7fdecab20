"""Gradient clipping out of its place in a training step: before ``backward()`` it clips the
gradients about to be replaced (or zeros), after ``step()`` the ones already applied, so the
update is never clipped. Found in the order of the step's statements, confirmed by the
behaviour: with the clip moved between backward() and step() the loss must fall further. A
clip inside a method the loop calls before backward() (the loss's ``training_step``) runs where
that call stands; it is moved into the loop, in the caller's names, and must then cap what
each step moves."""

from __future__ import annotations

import ast

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import Edit, Fix
from tutor.diagnosis.flow import call_name, text
from tutor.diagnosis.symptoms import steps_capped
from tutor.diagnosis.verify import loss_improves
from tutor.i18n import T, Text
from tutor.sandbox.models import RunResult

CLIPS = ("clip_grad_norm_", "clip_grad_value_", "clip_grad_norm", "clip_grads_with_norm_")


def _body_calls(body: list[ast.stmt], name: str) -> list[ast.stmt]:
    """The statements of one block (not nested deeper) that call ``name``."""
    return [s for s in body if isinstance(s, ast.Expr | ast.Assign) and any(
        isinstance(n, ast.Call) and call_name(n) == name for n in ast.walk(s))]


def _clip_called_from(ctx: Ctx, body: list[ast.stmt]
                      ) -> tuple[ast.stmt, ast.stmt, ast.Call] | None:
    """A clip that a statement of ``body`` runs through a call (``loss =
    model.training_step(batch)`` whose method clips): (that statement, the clip's own
    statement, the call). Where the call stands in the block is where the clip runs."""
    for stmt in body:
        for call in (n for n in ast.walk(stmt) if isinstance(n, ast.Call)):
            for function in ctx.flow.call_graph.functions:
                if call not in ctx.flow.calls_of(function):
                    continue
                clips = [s for name in CLIPS for s in _body_calls(function.body, name)]
                if len(clips) == 1:
                    return stmt, clips[0], call
    return None


def _moved_clip(ctx: Ctx, clip: ast.stmt, call: ast.Call, step: ast.stmt, back: ast.stmt
                ) -> Fix | None:
    """The clip taken out of the called method and put between backward() and step(), in
    the caller's names: ``self`` becomes what the method was called on."""
    owner = call.func.value if isinstance(call.func, ast.Attribute) else None
    line = ctx.flow.line(clip.lineno)
    if owner is None or clip.lineno != clip.end_lineno:
        return None
    text_ = line.strip().replace("self.", f"{ast.unparse(owner)}.")
    if "self" in text_.replace("self.", ""):
        return None
    # an inserted line takes the indentation of the line it goes before
    return Fix((Edit("insert_before", step.lineno, text_), Edit("delete", clip.lineno)),
               steps_capped, T(
        f"clip in the training step, between backward() (line {back.lineno}) and step() (line "
        f"{step.lineno}): `{text_}` there, not on line {clip.lineno} before backward() ran",
        f"在训练步骤里、backward()（第 {back.lineno} 行）和 step()（第 {step.lineno} 行）之间"
        f"裁剪：在那里写 `{text_}`，而不是在 backward() 之前的第 {clip.lineno} 行"))


def _clips_for_real(node: ast.AST) -> bool:
    """A clip call under ``node`` that caps something (``max_norm=float("inf")`` only
    measures the norm)."""
    for call in (n for n in ast.walk(node) if isinstance(n, ast.Call)):
        if call_name(call) not in CLIPS:
            continue
        bound = call.args[1] if len(call.args) > 1 else next(
            (k.value for k in call.keywords if k.arg in ("max_norm", "clip_value")), None)
        if bound is None or "inf" not in ast.unparse(bound):
            return True
    return False


def _clip_statements(body: list[ast.stmt]) -> list[ast.stmt]:
    """The statements of one block that clip: a call of its own, or an ``if`` whose body is
    only that call (``if grad_clip is not None: clip_grad_norm_(...)``)."""
    return [s for s in body if (isinstance(s, ast.Expr | ast.Assign) and _clips_for_real(s))
            or (isinstance(s, ast.If) and not s.orelse and len(s.body) == 1
                and _clips_for_real(s.body[0]))]


def _clips_what_step_applies(original: RunResult, fixed: RunResult) -> Text | None:
    """The moved clip: the program runs to its end, now clipping between the two calls (the
    order is the claim; a clip that only slows learning need not lower the loss)."""
    if fixed.outcome != "ok" or fixed.evidence is None or not fixed.evidence.steps:
        return None
    return T("with this change the clip caps the gradients that step() applies, and your "
             "program runs to the end",
             "改动后裁剪作用于 step() 要用的梯度，程序也能运行到底")


def _block_moved(ctx: Ctx, clip: ast.stmt, back: ast.stmt, step: ast.stmt) -> Fix:
    """The clipping statement of several lines moved whole just above ``step``."""
    lines = ctx.code.splitlines()
    end = clip.end_lineno or clip.lineno
    block = lines[clip.lineno - 1:end]
    base = len(block[0]) - len(block[0].lstrip())
    target = lines[step.lineno - 1][: len(lines[step.lineno - 1])
                                    - len(lines[step.lineno - 1].lstrip())]
    text = "\n".join([block[0][base:], *(target + line[base:] for line in block[1:])])
    edits = (Edit("insert_before", step.lineno, text),
             *(Edit("delete", n) for n in range(clip.lineno, end + 1)))
    span = f"{clip.lineno}-{end}"
    return Fix(edits, _clips_what_step_applies, T(
        f"clip between backward() (line {back.lineno}) and step() (line {step.lineno}): "
        f"move lines {span} just above line {step.lineno}",
        f"在 backward()（第 {back.lineno} 行）和 step()（第 {step.lineno} 行）之间裁剪："
        f"把第 {span} 行移到第 {step.lineno} 行之前"))


def check_clip_order(ctx: Ctx) -> list[Candidate]:
    if ctx.error is not None or not ctx.evidence.backwards or not ctx.evidence.steps:
        return []
    out = []
    for loop in (n for n in ast.walk(ctx.flow.tree) if isinstance(n, ast.For | ast.While)):
        body = loop.body
        backs, steps = _body_calls(body, "backward"), _body_calls(body, "step")
        if len(backs) != 1 or len(steps) != 1 or [
                s for name in CLIPS for s in _body_calls(body, name)]:
            continue
        found = _clip_called_from(ctx, body)
        if found is None or not found[0].lineno < backs[0].lineno:
            continue
        _, clip, call = found
        fix = _moved_clip(ctx, clip, call, steps[0], backs[0])
        facts = {"line": clip.lineno, "detail": T(
            f"before backward() on line {backs[0].lineno}",
            f"在第 {backs[0].lineno} 行的 backward() 之前")}
        out.append(Candidate("clip-order", clip.lineno, 0.8, [("clip-misplaced", facts)],
                             [fix] if fix else [], {"line": clip.lineno, "detail": T(
                                 "before backward()", "在 backward() 之前")}))
    for block in (n for n in ast.walk(ctx.flow.tree) if isinstance(
            n, ast.For | ast.While | ast.FunctionDef)):
        body = block.body
        backs, steps = _body_calls(body, "backward"), _body_calls(body, "step")
        clips = _clip_statements(body)
        if len(backs) != 1 or len(steps) != 1 or len(clips) != 1:
            continue
        back, step, clip = backs[0], steps[0], clips[0]
        if back.lineno < clip.lineno < step.lineno:
            continue  # where it belongs
        where = "before" if clip.lineno < back.lineno else "after"
        end = clip.end_lineno or clip.lineno
        if end == clip.lineno:
            fix = Fix((Edit("move_before", clip.lineno, to=step.lineno),), loss_improves, T(
                f"clip between backward() (line {back.lineno}) and step() (line "
                f"{step.lineno}): move line {clip.lineno} just above line {step.lineno}",
                f"在 backward()（第 {back.lineno} 行）和 step()（第 {step.lineno} 行）之间裁剪："
                f"把第 {clip.lineno} 行移到第 {step.lineno} 行之前"))
        else:  # the clip under its condition (if grad_clip is not None:), moved whole
            fix = _block_moved(ctx, clip, back, step)
        out.append(Candidate("clip-order", clip.lineno, 0.8, [
            ("clip-misplaced", {"line": clip.lineno, "detail": T(
                f"before backward() on line {back.lineno}" if where == "before"
                else f"after step() on line {step.lineno}",
                f"在第 {back.lineno} 行的 backward() 之前" if where == "before"
                else f"在第 {step.lineno} 行的 step() 之后")})],
            [fix], {"line": clip.lineno, "detail": T(
                "before backward()" if where == "before" else "after step()",
                "在 backward() 之前" if where == "before" else "在 step() 之后")}))
    return out


def _clips_unscaled(original: RunResult, fixed: RunResult) -> Text | None:
    """The unscale added: the program runs to its end, the clip now on real gradients (the
    order is the claim, as the AMP recipe states it)."""
    if fixed.outcome != "ok":
        return None
    return T("with this change the clip measures and caps the real gradients, not the "
             "scaled ones, and your program runs to the end",
             "改动后裁剪作用于真实的梯度而不是放大后的梯度，程序也能运行到底")


def _scaled_backward(stmt: ast.stmt) -> str | None:
    """``scaler.scale(loss).backward()``: the scaler's name."""
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    if isinstance(call, ast.Call) and call_name(call) == "backward" and isinstance(
            call.func, ast.Attribute) and isinstance(call.func.value, ast.Call) and \
            call_name(call.func.value) == "scale" and isinstance(call.func.value.func,
                                                                  ast.Attribute):
        return text(call.func.value.func.value)
    return None


def check_clip_scaled(ctx: Ctx) -> list[Candidate]:
    """With a GradScaler, ``backward()`` of the scaled loss leaves gradients multiplied by
    the scale (65536 at first): a clip between it and ``scaler.step()`` with no
    ``scaler.unscale_(optimizer)`` before it cuts them to the bound, and the step then
    divides them by the scale again, so the updates are tiny. The order is the whole
    claim (the AMP recipe); the change tried unscales just before the clip."""
    if ctx.error is not None or not ctx.evidence.backwards:
        return []
    out = []
    for block in (n for n in ast.walk(ctx.flow.tree) if isinstance(
            n, ast.For | ast.While | ast.FunctionDef)):
        body = block.body
        backs = [(s, name) for s in body if (name := _scaled_backward(s)) is not None]
        clips = _clip_statements(body)
        if len(backs) != 1 or len(clips) != 1:
            continue
        (back, scaler), clip = backs[0], clips[0]
        steps = [c for s in body for c in ast.walk(s) if isinstance(c, ast.Call)
                 and call_name(c) == "step" and isinstance(c.func, ast.Attribute)
                 and text(c.func.value) == scaler and len(c.args) == 1]
        unscaled = any(isinstance(c, ast.Call) and call_name(c) == "unscale_"
                       for s in body if s.lineno < clip.lineno for c in ast.walk(s))
        if len(steps) != 1 or unscaled or not back.lineno < clip.lineno < steps[0].lineno:
            continue
        optimizer = text(steps[0].args[0])
        line = clip.lineno
        fix = Fix((Edit("insert_before", line, f"{scaler}.unscale_({optimizer})"),),
                  _clips_unscaled, T(
                      f"unscale the gradients before clipping them: "
                      f"`{scaler}.unscale_({optimizer})` before line {line}",
                      f"裁剪之前先取消缩放：在第 {line} 行之前写 "
                      f"`{scaler}.unscale_({optimizer})`"))
        fill: dict[str, object] = {"line": line, "name": scaler, "optimizer": optimizer,
                                   "before_line": back.lineno}
        out.append(Candidate("clip-scaled-gradients", line, 0.85,
                             [("clip-before-unscale", fill)], [fix], fill, pinned=True))
    return out


EXCEPTION_CHECKS: tuple[Check, ...] = ()
SILENT_CHECKS: tuple[Check, ...] = (check_clip_order, check_clip_scaled)

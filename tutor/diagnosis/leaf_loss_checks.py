"""A loss that backward() runs on without error and that reaches no parameter: its graph was
cut upstream (a value taken out with ``.item()``, computed under ``no_grad``, detached), and
the error that cut would have raised was silenced by making the result a new tensor that
requires grad (``torch.tensor(x, requires_grad=True)``, ``loss.requires_grad = True``). The
re-run shows it: backward() reaches only the loss itself, and every optimizer step finds no
gradient. The fix takes both away: keep the graph at the cut, and drop the rebuild.
"""

from __future__ import annotations

import ast

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.cuts import MAKERS, cut_fixes
from tutor.diagnosis.fixes import Edit, Fix, replace_node
from tutor.diagnosis.flow import call_name, text
from tutor.diagnosis.graph_checks import CUT_STEP
from tutor.diagnosis.verify import both, loss_improves, params_learn
from tutor.i18n import T, Text
from tutor.sandbox.models import BackwardEvidence, ChainLink

REBUILDERS = MAKERS | {"Variable"}
"""Calls that make a new tensor from a value: given ``requires_grad=True``, a new leaf."""


def check_loss_rebuilt_as_leaf(ctx: Ctx) -> list[Candidate]:
    ev = ctx.evidence
    if ctx.error is not None or not ev.steps or not ev.backwards:
        return []
    first = ev.backwards[0]
    name = first.name
    if name is None or first.grad_fn is not None or not first.requires_grad or \
            first.reached not in ([], [name]):
        return []
    if not all(s.grads_none == s.n_params for s in ev.steps if s.n_params):
        return []
    rebuild = _rebuild(ctx, name, first.line)
    if rebuild is None:
        return []
    line, edit = rebuild
    cut = _cut(ctx, first, name, line)
    if cut is None:
        return []
    cut_line, reason, op = cut
    expect = both(params_learn([]), loss_improves)
    fixes = [Fix((*fix.edits, edit), expect, T(
        f"{fix.describe.en}, and {_undo(edit, line, name).en}",
        f"{fix.describe.zh}，并且{_undo(edit, line, name).zh}"))
        for fix in cut_fixes(ctx, cut_line, reason, op, expect)
        if all(e.line != line for e in fix.edits)]
    if not fixes:
        return []
    stmt = ctx.flow.statement_at(cut_line)
    block = ctx.flow.in_no_grad(stmt) if reason == "no_grad" and stmt is not None else None
    root = block.lineno if block is not None else cut_line  # the `with torch.no_grad()`
    facts = {"line": root, "op": text(block.items[0].context_expr) if block else op,
             "name": name, "fail_line": line,
             "params": _stepped(ctx)}
    return [Candidate("loss-rebuilt-as-leaf", root, 0.9, [
        ("leaf-loss", {"line": line, "name": name, "fail_line": first.line}),
        (CUT_STEP.get(reason, "cut-op"), {"line": cut_line, "op": op})], fixes, facts)]


def _stepped(ctx: Ctx) -> str | None:
    steps = ctx.evidence.steps
    names = list(dict.fromkeys(n for s in steps for n in s.params if n != "?"))
    return ", ".join(f"`{n}`" for n in names[:3]) or None


def _undo(edit: Edit, line: int, name: str) -> Text:
    if edit.kind == "delete":
        return T(f"delete line {line}, which only hides the cut",
                 f"删除第 {line} 行（它只是把切断掩盖起来）")
    return T(f"use the value itself on line {line}, not a new tensor made from it",
             f"第 {line} 行直接使用这个值，而不是由它新建的张量")


def _rebuild(ctx: Ctx, name: str, backward_line: int) -> tuple[int, Edit] | None:
    """Where the loss was made a new tensor that requires grad: ``name.requires_grad = True``
    (or ``requires_grad_()``), deleted; or ``name = torch.tensor(value, requires_grad=True)``,
    the value itself kept."""
    for op in ctx.evidence.ops:
        if op.kind == "requires_grad" and op.name == name and op.line < backward_line:
            stmt = ctx.flow.statement_at(op.line)
            if stmt is not None and stmt.lineno == stmt.end_lineno and isinstance(
                    stmt, (ast.Assign, ast.Expr)):
                return stmt.lineno, Edit("delete", stmt.lineno)
    made = ctx.flow.assigned_before(name, backward_line)
    value = ctx.flow.value_of(made) if made is not None else None
    # (``Variable(loss, requires_grad=True)``: the pre-0.4 spelling of the same rebuild)
    if isinstance(value, ast.Call) and call_name(value) in REBUILDERS and value.args and any(
            k.arg == "requires_grad" for k in value.keywords):
        edit = replace_node(ctx.code, value, text(value.args[0]))
        if edit is not None and made is not None:
            return made.lineno, edit
    return None


def _cut(ctx: Ctx, first: BackwardEvidence, name: str, rebuilt: int
         ) -> tuple[int, str, str] | None:
    """Where the loss's history was cut: the first link of its recorded history that lost
    the graph, else a value taken to Python on a line that flows into the loss."""
    link = next((lk for lk in first.chain if _lost(lk)), None)
    if link is not None:
        reason = link.cut if link.cut not in (None, "new") else (
            "no_grad" if not link.grad_enabled else "nondifferentiable")
        return link.line, reason or "nondifferentiable", link.op
    feeding = ctx.flow.slice_lines(name, rebuilt + 1)
    for op in ctx.evidence.ops:
        if op.kind == "cut" and op.detail == "python" and op.line in feeding:
            return op.line, "python", op.op
    # no history was recorded (the value was rebuilt before it reached backward()), and the
    # cut is inside a function the loss's line calls (a model's forward returning `.data`):
    # the one `.data` read or detach of the run, before the rebuild, is that cut
    called = _called_lines(ctx, feeding | {rebuilt})
    cuts = [op for op in ctx.evidence.ops if op.line in called and op.line < rebuilt and (
        op.kind == "data" or (op.kind == "cut" and op.op == "detach"))]
    if len({op.line for op in cuts}) == 1:
        op = cuts[0]
        return op.line, "data" if op.kind == "data" else "nondifferentiable", op.op
    return None


def _called_lines(ctx: Ctx, lines: set[int]) -> set[int]:
    """The lines of the functions (and their callees, a few levels down) that ``lines``
    call, by name: a model called as ``model(x)`` runs its class's ``forward``."""
    flow = ctx.flow
    seen: set[int] = set()
    todo = sorted(lines)
    out: set[int] = set()
    for _ in range(4):
        found: list[int] = []
        for line in todo:
            stmt = flow.statement_at(line)
            if stmt is None or line in seen:
                continue
            seen.add(line)
            first, last = stmt.lineno, stmt.end_lineno or stmt.lineno
            for function in (f for f in flow.call_graph.functions if any(
                    first <= c.lineno <= last for c in flow.calls_of(f))):
                body = range(function.lineno, (function.end_lineno or function.lineno) + 1)
                out |= set(body)
                found += list(body)
        todo = found
    return out


def _lost(link: ChainLink) -> bool:
    return (link.cut is not None and link.cut != "new") or (
        link.inputs_rg and link.requires_grad is False)


EXCEPTION_CHECKS: tuple[Check, ...] = ()
SILENT_CHECKS: tuple[Check, ...] = (check_loss_rebuilt_as_leaf,)

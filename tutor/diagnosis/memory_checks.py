"""Values a training loop keeps with their autograd graphs: a running total of the loss
(``total += loss``, begun at a number) adds the tensor itself, so every batch's graph stays
alive through it and memory grows with each pass. The change tried adds the loss's value
(``loss.item()``); it is shown when what the program prints no longer carries a ``grad_fn``,
or prints something else (the symptom the learner looked at)."""

from __future__ import annotations

import ast

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import node_fix
from tutor.diagnosis.flow import call_name, receiver
from tutor.diagnosis.verify import prints_else
from tutor.i18n import T, Text
from tutor.sandbox.models import RunResult


def graph_not_printed(original: RunResult, fixed: RunResult) -> Text | None:
    """The fixed program runs and prints fewer values with a ``grad_fn``, or else prints
    something else than the learner's did."""
    if fixed.outcome != "ok":
        return None
    if original.stdout.count("grad_fn=") > fixed.stdout.count("grad_fn="):
        return T("with this change what your program prints no longer carries a `grad_fn`: "
                 "the running total is a number, and no batch's graph is kept through it",
                 "改动后程序打印的内容不再带 `grad_fn`：累计值是一个数，"
                 "不会再通过它保留每个 batch 的计算图")
    return prints_else(original, fixed)


def check_loss_total_keeps_graph(ctx: Ctx) -> list[Candidate]:
    flow = ctx.flow
    if ctx.error is not None or not ctx.evidence.backwards:
        return []
    out = []
    for call in flow.calls:
        loss = receiver(call)
        if call_name(call) != "backward" or not loss or not loss.isidentifier():
            continue
        stmt = flow.statement_at(call.lineno)
        loops = flow.loops_of(stmt) if stmt is not None else []
        if not loops:
            continue
        for node in ast.walk(loops[0]):
            added = _added_loss(node, loss)
            if added is None or not _starts_at_a_number(ctx, node, loops[0]):
                continue
            assert isinstance(node, (ast.AugAssign, ast.Assign))
            total = ast.unparse(node.targets[0] if isinstance(node, ast.Assign) else node.target)
            fix = node_fix(ctx.code, added, f"{loss}.item()", graph_not_printed, T(
                f"add the loss's value, not the tensor: `{loss}.item()` on line {node.lineno}",
                f"累加损失的数值而不是张量：第 {node.lineno} 行写 `{loss}.item()`"))
            out.append(Candidate("loss-total-keeps-graph", node.lineno, 0.8, [
                ("loss-added-with-graph", {"line": node.lineno, "name": total, "op": loss})],
                [fix] if fix is not None else [],
                {"line": node.lineno, "name": total, "op": loss}))
    return out


def _added_loss(node: ast.AST, loss: str) -> ast.Name | None:
    """The ``loss`` of ``total += loss`` or ``total = total + loss``."""
    if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add) and isinstance(
            node.target, ast.Name) and isinstance(node.value, ast.Name) and node.value.id == loss:
        return node.value
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(
            node.targets[0], ast.Name) and isinstance(node.value, ast.BinOp) and isinstance(
            node.value.op, ast.Add):
        sides = (node.value.left, node.value.right)
        name = node.targets[0].id
        if any(isinstance(s, ast.Name) and s.id == name for s in sides):
            return next((s for s in sides if isinstance(s, ast.Name) and s.id == loss), None)
    return None


def _starts_at_a_number(ctx: Ctx, node: ast.AST, loop: ast.stmt) -> bool:
    """The total is set to a plain number before the loop (``total = 0``, ``= 0.0``): a
    running sum meant for logging, not a loss built on purpose from several terms."""
    target = node.target if isinstance(node, ast.AugAssign) else node.targets[0]  # type: ignore[attr-defined]
    if not isinstance(target, ast.Name):
        return False
    made = ctx.flow.assigned_before(target.id, loop.lineno)
    value = made.value if isinstance(made, ast.Assign) else None
    return isinstance(value, ast.Constant) and isinstance(value.value, (int, float)) and not \
        isinstance(value.value, bool)


EXCEPTION_CHECKS: tuple[Check, ...] = ()
SILENT_CHECKS: tuple[Check, ...] = (check_loss_total_keeps_graph,)

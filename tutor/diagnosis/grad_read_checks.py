"""A gradient read in a loop before the backward() that fills it, in the same pass: what the
pass keeps (appends, assigns, prints) is the gradient the previous pass left, so every value
lags one pass behind (the first is whatever ``.grad`` held before: zeros, or a stale one) and
the last pass's gradient is never read. The change tried moves the read below that
backward(); it is kept where the program then runs and prints something else.

A read whose value the same pass compares after its backward() (``before = w.grad.clone()``,
then ``w.grad - before``) is meant to see the old gradient, and is left alone; so is a read
that only resets the gradient (``w.grad.zero_()``, ``w.grad = None``)."""

from __future__ import annotations

import ast

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import Edit, Fix
from tutor.diagnosis.flow import call_name, target_names, text
from tutor.diagnosis.verify import prints_else
from tutor.i18n import T

_RESETS = frozenset({"zero_", "fill_", "detach_", "requires_grad_"})
_LOOPS = (ast.For, ast.While, ast.AsyncFor)


def _backward_at(stmt: ast.stmt) -> bool:
    return any(isinstance(n, ast.Call) and call_name(n) == "backward" for n in ast.walk(stmt))


def _grad_reads(stmt: ast.stmt) -> list[ast.Attribute]:
    """The ``X.grad`` the statement reads for its value: not a reset of it (``X.grad.zero_()``,
    ``X.grad = None``) and not a test of it (``X.grad is None``)."""
    if isinstance(stmt, ast.Assign) and any(
            isinstance(t, ast.Attribute) and t.attr == "grad" for t in stmt.targets):
        return []
    parents = {id(child): node for node in ast.walk(stmt) for child in ast.iter_child_nodes(node)}
    out = []
    for node in ast.walk(stmt):
        if not (isinstance(node, ast.Attribute) and node.attr == "grad"
                and isinstance(node.ctx, ast.Load)):
            continue
        parent = parents.get(id(node))
        if isinstance(parent, ast.Attribute) and parent.attr in _RESETS:
            continue  # w.grad.zero_()
        if isinstance(parent, ast.Attribute) and parent.attr == "data":
            grand = parents.get(id(parent))
            if isinstance(grand, ast.Attribute) and grand.attr in _RESETS:
                continue  # w.grad.data.zero_()
        if isinstance(parent, ast.Compare):
            continue  # w.grad is None
        out.append(node)
    return out


def _kept(stmt: ast.stmt) -> bool:
    """The statement keeps what it reads: an assignment, or a call (``rows.append(...)``,
    ``print(...)``, ``history.append(...)``)."""
    if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
        return True
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)


def _compared_after(body: list[ast.stmt], stmt: ast.stmt, after: int) -> bool:
    """The names the statement binds are read again after the backward() in the same pass:
    the old gradient is kept on purpose, to compare with the new one."""
    if not isinstance(stmt, (ast.Assign, ast.AnnAssign)):
        return False
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
    names = {n for t in targets for n in target_names(t)}
    return any(isinstance(n, ast.Name) and n.id in names and isinstance(n.ctx, ast.Load)
               for later in body[after:] for n in ast.walk(later))


def check_grad_read_before_backward(ctx: Ctx) -> list[Candidate]:
    if ctx.error is not None:
        return []
    out: list[Candidate] = []
    for loop in (n for n in ast.walk(ctx.flow.tree) if isinstance(n, _LOOPS)):
        body = loop.body
        back = next((i for i, s in enumerate(body) if _backward_at(s)), None)
        if back is None:
            continue
        for stmt in body[:back]:
            reads = _grad_reads(stmt)
            if not reads or not _kept(stmt) or _backward_at(stmt) or \
                    _compared_after(body, stmt, back + 1):
                continue
            line, back_line = stmt.lineno, body[back].end_lineno or body[back].lineno
            if (stmt.end_lineno or line) != line:
                continue  # one line moves as it is
            name = text(reads[0].value)
            facts: dict[str, object] = {"line": line, "name": name, "backward_line": back_line}
            out.append(Candidate("grad-read-before-backward", line, 0.7, [
                ("read-before-backward", facts)],
                [Fix((Edit("move_after", line, to=back_line),), prints_else, T(
                    f"read `{name}.grad` after the backward() on line {back_line}: move line "
                    f"{line} below it",
                    f"在第 {back_line} 行的 backward() 之后再读 `{name}.grad`：把第 {line} 行"
                    "移到它后面"))], facts))
    return out[:2]


EXCEPTION_CHECKS: tuple[Check, ...] = ()
SILENT_CHECKS: tuple[Check, ...] = (check_grad_read_before_backward,)

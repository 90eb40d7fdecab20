"""A local variable read where no assignment of it ran ("cannot access local variable 'x'
where it is not associated with a value"): the function assigns it only inside one branch of
an ``if`` (a loss computed only when a flag is set), and the run took the other. The branch
and its condition are named; where the assignment needs nothing the branch computes before
it, moving it above the ``if`` (so that every path has it) is tried."""

from __future__ import annotations

import ast
import re

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import Edit, Fix
from tutor.diagnosis.flow import target_names, text
from tutor.diagnosis.verify import runs_clean
from tutor.i18n import T

UNBOUND = re.compile(r"cannot access local variable '(\w+)' where it is not associated with a "
                     r"value|local variable '(\w+)' referenced before assignment")


def check_unbound_in_branch(ctx: Ctx) -> list[Candidate]:
    found = UNBOUND.search(ctx.message) if ctx.error is not None else None
    if found is None or ctx.error is None or ctx.error.type != "UnboundLocalError":
        return []
    name = found.group(1) or found.group(2)
    fail = ctx.fail_line or 0
    function = ctx.flow.function_at(fail)
    if function is None:
        return []
    assigned = [node for node in ast.walk(function) if isinstance(node, ast.Assign)
                and node.lineno < fail and any(name in target_names(t) for t in node.targets)]
    out = []
    for stmt in assigned:
        branch = _branch_of(ctx, stmt, fail)
        if branch is None:
            continue
        test, in_body = branch
        fill: dict[str, object] = {
            "line": stmt.lineno, "fail_line": fail, "name": name, "condition": text(test.test),
            "detail": T("false", "假") if in_body else T("true", "真"),
            "label": T("the body", "主体") if in_body else T("the `else` branch", "`else` 分支"),
        }
        fixes = []
        if not _needs_branch(ctx, stmt, test) and stmt.lineno == stmt.end_lineno:
            fixes.append(Fix((Edit("move_before", stmt.lineno, to=test.lineno),), runs_clean, T(
                f"assign `{name}` before the `if` on line {test.lineno}, so that every path "
                f"has it: move line {stmt.lineno} above line {test.lineno}",
                f"在第 {test.lineno} 行的 `if` 之前给 `{name}` 赋值，让每条路径都有它：把第 "
                f"{stmt.lineno} 行移到第 {test.lineno} 行之前")))
        out.append(Candidate("unbound-in-branch", stmt.lineno, 0.85, [
            ("assigned-in-branch", fill)], fixes, fill))
    return out[:1]


def _branch_of(ctx: Ctx, stmt: ast.stmt, fail: int) -> tuple[ast.If, bool] | None:
    """The innermost ``if`` around ``stmt`` that the failing line is outside of, and whether
    ``stmt`` is in its body (else: its ``else``)."""
    for ancestor in ctx.flow.ancestors(stmt):
        if not isinstance(ancestor, ast.If):
            continue
        if ancestor.lineno <= fail <= (ancestor.end_lineno or ancestor.lineno):
            return None  # the read is inside the same ``if``: another story
        in_body = any(stmt is node or stmt in ast.walk(node) for node in ancestor.body)
        return ancestor, in_body
    return None


def _needs_branch(ctx: Ctx, stmt: ast.Assign, test: ast.If) -> bool:
    """The assignment reads a name the branch assigns before it (it needs the branch)."""
    used = {n.id for n in ast.walk(stmt.value) if isinstance(n, ast.Name)}
    made = {name for node in ast.walk(test) if isinstance(node, ast.Assign)
            and node.lineno < stmt.lineno for t in node.targets for name in target_names(t)}
    return bool(used & made)


EXCEPTION_CHECKS: tuple[Check, ...] = (check_unbound_in_branch,)
SILENT_CHECKS: tuple[Check, ...] = ()

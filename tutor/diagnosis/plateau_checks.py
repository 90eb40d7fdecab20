"""``ReduceLROnPlateau.step()`` called without the value it watches: unlike the other
schedulers, which count epochs, it lowers the rate when a metric stops improving, so its step
takes that metric (the validation loss, usually). The candidates are the program's names for a
held-out loss or metric visible where the step is called; each is tried. A training loss is
not offered: stepped with the batches it would count ``patience`` in batches."""

from __future__ import annotations

import ast
import re

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import Fix, replace_node
from tutor.diagnosis.flow import call_name, target_names, text
from tutor.diagnosis.verify import runs_clean
from tutor.i18n import T

MISSING = re.compile(r"ReduceLROnPlateau\.step\(\) missing 1 required positional argument")
METRIC = re.compile(r"loss|metric|score|acc|err", re.IGNORECASE)
HELD_OUT = re.compile(r"val|valid|dev|test|eval", re.IGNORECASE)
MAX_TRIED = 3


def _metric_names(ctx: Ctx, stmt: ast.stmt) -> list[str]:
    """Names assigned before the step in its function (or the module), and the instance's
    attributes its class assigns, that name a held-out loss or metric: the function's own
    first, the latest first."""
    scope = ctx.flow.scope_of(stmt)
    seen: dict[str, int] = {}
    for node in ast.walk(scope):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For)) and \
                node.lineno < stmt.lineno and ctx.flow.scope_of(node) is scope:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for name in target_names(target):
                    if "." not in name and METRIC.search(name):
                        seen[name] = node.lineno
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        for arg in scope.args.args:
            if METRIC.search(arg.arg):
                seen.setdefault(arg.arg, scope.lineno)
        # a loss a method of the same class keeps on the instance (``self.loss_G``)
        owner = ctx.flow.parents.get(scope)
        for node in ast.walk(owner) if isinstance(owner, ast.ClassDef) else ():
            if isinstance(node, ast.Assign):
                for name in (n for t in node.targets for n in target_names(t)):
                    if name.startswith("self.") and name.count(".") == 1 and \
                            METRIC.search(name[5:]):
                        seen.setdefault(name, 0)
    # a training loss, stepped where the batches are, would count `patience` in batches:
    # only a held-out value is what the scheduler is meant to watch
    held_out = [n for n in seen if HELD_OUT.search(n)]
    return sorted(held_out, key=lambda n: ("." in n, -seen[n]))


def check_plateau_without_metric(ctx: Ctx) -> list[Candidate]:
    if not MISSING.search(ctx.message):
        return []
    line, stmt = ctx.failing_statement()
    call = next((n for n in ast.walk(stmt) if isinstance(n, ast.Call) and call_name(n) == "step"
                 and isinstance(n.func, ast.Attribute) and not n.args and not n.keywords),
                None) if stmt is not None else None
    if call is None or stmt is None or not isinstance(call.func, ast.Attribute):
        return []
    scheduler = text(call.func.value)
    fixes = []
    for name in _metric_names(ctx, stmt)[:MAX_TRIED]:
        new = f"{scheduler}.step({name})"
        edit = replace_node(ctx.code, call, new)
        if edit is not None:
            fixes.append(Fix((edit,), runs_clean, T(
                f"give the scheduler the value it watches on line {line}: `{new}`",
                f"第 {line} 行把调度器要观察的值传给它：`{new}`")))
    fill: dict[str, object] = {"line": line, "name": scheduler}
    return [Candidate("plateau-without-metric", line, 0.85, [("plateau-step", fill)], fixes,
                      fill)]


EXCEPTION_CHECKS: tuple[Check, ...] = (check_plateau_without_metric,)
SILENT_CHECKS: tuple[Check, ...] = ()

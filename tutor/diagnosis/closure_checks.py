"""A value passed to ``optimizer.step``: its one argument is a closure, a function that
computes the loss again (LBFGS calls it several times a step), so torch calls what it is given
and fails on a loss, a dict of losses or a number ("object is not callable"). The gradients
are already in ``.grad`` after backward(): ``step()`` takes nothing. That change is tried."""

from __future__ import annotations

import ast

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import Fix, replace_node
from tutor.diagnosis.flow import call_name, text
from tutor.diagnosis.verify import runs_clean
from tutor.i18n import T

NEEDS_CLOSURE = frozenset({"LBFGS"})


def check_value_given_as_closure(ctx: Ctx) -> list[Candidate]:
    if ctx.error is None or ctx.error.raised_by != "torch" or \
            "object is not callable" not in ctx.message:
        return []
    line, stmt = ctx.failing_statement()
    step = next((n for n in ast.walk(stmt) if isinstance(n, ast.Call) and
                 call_name(n) == "step" and isinstance(n.func, ast.Attribute) and
                 len(n.args) + len(n.keywords) == 1), None) if stmt is not None else None
    if step is None or not isinstance(step.func, ast.Attribute):
        return []
    optimizer = text(step.func.value)
    kinds = {call_name(call) for _, name, call in ctx.flow.optimizers() if name == optimizer}
    if kinds & NEEDS_CLOSURE:
        return []  # LBFGS does need a closure: the value is the mistake there
    given = text(step.args[0] if step.args else step.keywords[0].value)
    new = f"{optimizer}.step()"
    edit = replace_node(ctx.code, step, new)
    fill: dict[str, object] = {"line": line, "optimizer": optimizer, "name": given}
    fixes = [Fix((edit,), runs_clean, T(
        f"call `{new}` with nothing on line {line}: the gradients it applies are already in "
        "each parameter's `.grad`",
        f"第 {line} 行不带参数调用 `{new}`：它要用的梯度已经在各参数的 `.grad` 里了"))] \
        if edit is not None else []
    return [Candidate("value-given-as-closure", line, 0.9, [("step-given-value", fill)],
                      fixes, fill)]


EXCEPTION_CHECKS: tuple[Check, ...] = (check_value_given_as_closure,)
SILENT_CHECKS: tuple[Check, ...] = ()

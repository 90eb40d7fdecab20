""""optimizer got an empty parameter list" where the optimizer was given a pick of parameters
(a list filled by a loop, a filter on ``requires_grad``, a group by name), not a model's
``.parameters()``: the pick came out empty, though the model may well have parameters, so the
message's usual reading (a model with no registered layers) is not said. The argument and the
line that built it are named."""

from __future__ import annotations

import ast

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.flow import call_name, text

MESSAGE = "optimizer got an empty parameter list"


def _all_parameters(value: ast.expr) -> bool:
    """``model.parameters()``, ``list(model.parameters())``, ``[*model.parameters()]``."""
    if isinstance(value, ast.Call) and call_name(value) in ("list", "tuple") and \
            len(value.args) == 1:
        value = value.args[0]
    if isinstance(value, ast.List) and len(value.elts) == 1 and isinstance(
            value.elts[0], ast.Starred):
        value = value.elts[0].value
    return isinstance(value, ast.Call) and call_name(value) == "parameters" and not value.args


def check_empty_pick(ctx: Ctx) -> list[Candidate]:
    if MESSAGE not in ctx.message:
        return []
    line, stmt = ctx.failing_statement()
    built = [(s, name, call) for s, name, call in ctx.flow.optimizers() if s is stmt]
    if not built or not built[0][2].args:
        return []
    given = built[0][2].args[0]
    name = text(given)
    made = [s for s in ctx.flow.assignments.get(name, []) if s.lineno < line]
    value = ctx.flow.value_of(made[-1]) if made and isinstance(given, ast.Name) else given
    if value is None or _all_parameters(value):
        return []  # all of a model's parameters: the catalog's reading holds
    ctx.refuted.add("optimizer-empty-params")  # its reading (no registered layers) is not shown
    fill: dict[str, object] = {"line": line, "name": name,
                               "before_line": made[-1].lineno if made else line}
    return [Candidate("optimizer-empty-group", line, 0.85, [("empty-pick", fill)], [], fill,
                      pinned=True)]


EXCEPTION_CHECKS: tuple[Check, ...] = (check_empty_pick,)
SILENT_CHECKS: tuple[Check, ...] = ()

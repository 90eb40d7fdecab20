""""optimizer got an empty parameter list" where the optimizer was given a pick of parameters
(a list filled by a loop, a filter on ``requires_grad``, a group by name), not a model's
``.parameters()``: the pick came out empty, though the model may well have parameters, so the
message's usual reading (a model with no registered layers) is not said. The argument and the
line that built it are named."""

from __future__ import annotations

import ast
import re

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import Fix, replace_node
from tutor.diagnosis.flow import call_name, text
from tutor.diagnosis.verify import runs_clean
from tutor.i18n import T

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


GENERATOR_MET = re.compile(r"optimizer can only optimize Tensors, but one of the params is "
                           r"(?:Module\.parameters|generator|Module\.named_parameters)")


def check_generators_listed(ctx: Ctx) -> list[Candidate]:
    """"optimizer can only optimize Tensors, but one of the params is Module.parameters":
    the program collects ``x.parameters()`` into a list with ``append``, so the list holds
    the generators, not the tensors they yield. ``extend`` at each such append is tried."""
    if ctx.error is None or not GENERATOR_MET.search(ctx.message):
        return []
    appends = [c for c in ctx.flow.calls_named("append") if isinstance(c.func, ast.Attribute)
               and len(c.args) == 1 and isinstance(c.args[0], ast.Call)
               and call_name(c.args[0]) in ("parameters", "named_parameters")]
    if not appends:
        return []
    edits = []
    for call in appends:
        assert isinstance(call.func, ast.Attribute)
        edit = replace_node(ctx.code, call.func, f"{text(call.func.value)}.extend")
        if edit is None:
            return []
        edits.append(edit)
    first = appends[0]
    assert isinstance(first.func, ast.Attribute)
    name = text(first.func.value)
    fill: dict[str, object] = {"line": first.lineno, "name": name,
                               "fail_line": ctx.fail_line or first.lineno,
                               "count": len(appends)}
    return [Candidate("parameters-appended", first.lineno, 0.9, [("generator-listed", fill)], [
        Fix(tuple(edits), runs_clean, T(
            f"add the tensors themselves: `{name}.extend(...)` instead of `append` on "
            + ("line " if len(appends) == 1 else "lines ")
            + ", ".join(str(c.lineno) for c in appends),
            f"把张量本身加进去：第 {'、'.join(str(c.lineno) for c in appends)} 行用 "
            f"`{name}.extend(...)` 代替 `append`"))], fill)]


EXCEPTION_CHECKS: tuple[Check, ...] = (check_empty_pick, check_generators_listed)
SILENT_CHECKS: tuple[Check, ...] = ()

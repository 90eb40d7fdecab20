"""An iterator asked for more than it holds: ``it = iter(loader)`` made once, then
``next(it)`` in a loop that outlasts one pass over ``loader`` (an epoch loop around a batch
loop), so ``next`` raises ``StopIteration``. The changes tried: make the iterator again at
the start of each pass of the loop around the one that reads it, or else start it over
where it runs out.
"""

from __future__ import annotations

import ast

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import Edit, Fix, indent_of
from tutor.diagnosis.flow import text
from tutor.diagnosis.verify import runs_clean
from tutor.i18n import T


def check_exhausted_iterator(ctx: Ctx) -> list[Candidate]:
    if ctx.error is None or ctx.error.type != "StopIteration":
        return []
    line, stmt = ctx.failing_statement()
    if stmt is None:
        return []
    read = next((c for c in ast.walk(stmt) if isinstance(c, ast.Call) and isinstance(
        c.func, ast.Name) and c.func.id == "next" and c.args), None)
    if read is None:
        return []
    name = text(read.args[0])
    made = ctx.flow.assigned_before(name, line, stmt) or ctx.flow.assigned_before(name, line)
    value = ctx.flow.value_of(made) if made is not None else None
    if made is None or not isinstance(value, ast.Call) or text(value.func) != "iter" or \
            not value.args:
        return []
    source = text(value.args[0])
    loops = ctx.flow.loops_of(stmt)
    if not loops or made in [s for loop in loops for s in ast.walk(loop)]:
        return []  # made again in the loop that reads it: another story
    fixes = []
    if len(loops) >= 2:
        outer = loops[1]
        if not isinstance(outer, (ast.For, ast.AsyncFor, ast.While)):
            return []
        first = outer.body[0]
        fixes.append(Fix((Edit("insert_before", first.lineno, f"{name} = iter({source})"),),
                         runs_clean, T(
            f"make the iterator again at the start of each pass of the loop on line "
            f"{outer.lineno}: `{name} = iter({source})`",
            f"在第 {outer.lineno} 行的循环每一轮开始时重新创建迭代器：`{name} = iter({source})`")))
    if stmt.lineno == stmt.end_lineno:
        fixes.append(Fix((_restart_where_it_ends(ctx.flow.line(line), name, source, line),),
                         runs_clean, T(
            f"start `{name}` over from `{source}` when it runs out (line {line})",
            f"`{name}` 用完时从 `{source}` 重新开始（第 {line} 行）")))
    fill = {"line": made.lineno, "name": name, "op": source, "fail_line": line,
            "detail": f"`{name} = iter({source})`"}
    return [Candidate("iterator-exhausted", made.lineno, 0.85, [
        ("iterator-made-once", fill), ("iterator-read-past-end", fill)], fixes, fill)]


def _restart_where_it_ends(source_line: str, name: str, source: str, line: int) -> Edit:
    pad = indent_of(source_line)
    body = source_line.strip()
    return Edit("replace", line, "\n".join((
        f"{pad}try:", f"{pad}    {body}", f"{pad}except StopIteration:",
        f"{pad}    {name} = iter({source})", f"{pad}    {body}")))


EXCEPTION_CHECKS: tuple[Check, ...] = (check_exhausted_iterator,)
SILENT_CHECKS: tuple[Check, ...] = ()

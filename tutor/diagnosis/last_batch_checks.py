"""An error that comes from the last batch of a loop, the one smaller than the others: a
value made for a full batch (labels of the configured batch size, an RNN state built once)
meets the remainder of the data. Where the failing code runs inside a loop over a
``DataLoader`` that keeps its incomplete last batch (or over ``range(0, n, size)`` slices),
the same program with that batch left out is tried; only if it then runs is this said. The
fix shown is that change; the words also say the lasting one (sizes taken from the batch)."""

from __future__ import annotations

import ast

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import Fix, replace_node
from tutor.diagnosis.flow import call_name, text
from tutor.diagnosis.verify import runs_clean
from tutor.i18n import T


def check_last_batch(ctx: Ctx) -> list[Candidate]:
    if ctx.error is None or ctx.error.type not in ("RuntimeError", "ValueError", "IndexError"):
        return []
    frames = ctx.error.traceback
    lines = [f.line for f in frames] or [ctx.fail_line or 0]
    out: list[Candidate] = []
    seen: set[int] = set()
    for number in lines:
        stmt = ctx.flow.statement_at(number)
        loops = ctx.flow.loops_of(stmt) if stmt is not None else []
        for loop in loops:
            if not isinstance(loop, ast.For) or loop.lineno in seen:
                continue
            seen.add(loop.lineno)
            cand = _loader_loop(ctx, loop, number) or _range_loop(ctx, loop, number)
            if cand is not None:
                out.append(cand)
    return out[:1]


def _loader_loop(ctx: Ctx, loop: ast.For, line: int) -> Candidate | None:
    """``for x, y in loader`` where ``loader = DataLoader(..., batch_size=...)`` keeps its
    last batch: ``drop_last=True`` is tried."""
    name = text(loop.iter)
    made = ctx.flow.assigned_before(name, loop.lineno) or next(
        iter(reversed(ctx.flow.assignments.get(name, []))), None)
    call = ctx.flow.value_of(made) if made is not None else None
    if not isinstance(call, ast.Call) or call_name(call) != "DataLoader" or any(
            k.arg == "drop_last" for k in call.keywords):
        return None
    size = next((k.value for k in call.keywords if k.arg == "batch_size"),
                call.args[1] if len(call.args) > 1 else None)
    if size is None:
        return None
    edit = replace_node(ctx.code, call, text(call)[:-1].rstrip() + ", drop_last=True)")
    fill: dict[str, object] = {"line": call.lineno, "fail_line": ctx.fail_line or line,
                               "name": name, "expr": text(size), "train_line": loop.lineno}
    fixes = [Fix((edit,), runs_clean, T(
        f"leave out the incomplete last batch of `{name}`: `drop_last=True` on line "
        f"{call.lineno}",
        f"去掉 `{name}` 不完整的最后一个批次：第 {call.lineno} 行加上 `drop_last=True`"))] \
        if edit is not None else []
    return Candidate("last-batch-smaller", call.lineno, 0.75, [("last-batch", fill)], fixes,
                     fill, only_if_tried=True)


def _range_loop(ctx: Ctx, loop: ast.For, line: int) -> Candidate | None:
    """``for i in range(0, len(x), size)`` with ``x[i:i + size]``: the stop becomes
    ``len(x) - size + 1``, so every slice is full."""
    it = loop.iter
    if not (isinstance(it, ast.Call) and call_name(it) == "range" and len(it.args) == 3
            and isinstance(loop.target, ast.Name)):
        return None
    size = text(it.args[2])
    index = loop.target.id
    sliced = [n.value for n in ast.walk(loop) if isinstance(n, ast.Subscript)
              and isinstance(n.slice, ast.Slice) and n.slice.upper is not None
              and text(n.slice.upper).replace(" ", "") == f"{index}+{size}".replace(" ", "")]
    if not sliced:
        return None
    stop = it.args[1]
    new = f"{text(stop)} - {size} + 1"
    edit = replace_node(ctx.code, stop, new)
    # (named by what is sliced, `data`, not by the range's stop, `len(data)`)
    fill: dict[str, object] = {"line": loop.lineno, "fail_line": ctx.fail_line or line,
                               "name": text(sliced[0]), "expr": size,
                               "train_line": loop.lineno}
    fixes = [Fix((edit,), runs_clean, T(
        f"leave out the incomplete last slice: `range({text(it.args[0])}, {new}, {size})` on "
        f"line {loop.lineno}",
        f"去掉不完整的最后一片：第 {loop.lineno} 行写成 `range({text(it.args[0])}, {new}, "
        f"{size})`"))] if edit is not None else []
    return Candidate("last-batch-smaller", loop.lineno, 0.75, [("last-batch", fill)], fixes,
                     fill, only_if_tried=True)


EXCEPTION_CHECKS: tuple[Check, ...] = (check_last_batch,)
SILENT_CHECKS: tuple[Check, ...] = ()

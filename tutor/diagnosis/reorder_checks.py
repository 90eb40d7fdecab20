"""A ``view`` or ``reshape`` that puts a tensor's sizes in another order, (N, C, H, W) viewed
as (N, H*W, C): a view keeps the elements in their memory order and only cuts it anew, so
each new row mixes values of different channels and positions, and nothing fails. The
recorder sees the two shapes (:func:`tutor.sandbox.evidence.reorders`); the change tried
moves the dimensions with ``permute`` and keeps the learner's own sizes."""

from __future__ import annotations

import ast
import re

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import Expect, Fix, replace_node
from tutor.diagnosis.flow import call_name, receiver, text
from tutor.i18n import T, Text
from tutor.sandbox.evidence import merged_sizes
from tutor.sandbox.models import RunResult

SHAPES = re.compile(r"^\[(?P<before>[\d, ]*)\] -> \[(?P<after>[\d, ]*)\]$")


def _sizes(found: str) -> list[int]:
    return [int(v) for v in found.split(",") if v.strip()]


def _matching(old: list[int], new: list[int]) -> tuple[list[int], list[int]] | None:
    """The merge of ``old`` into ``len(new)`` sizes that ``new`` reorders, and the order:
    ``new[i] == groups[order[i]]``."""
    for groups in merged_sizes(old, len(new)):
        if sorted(groups) == sorted(new) and len(set(groups)) == len(groups):
            return groups, [groups.index(size) for size in new]
    return None


def _gone(line: int) -> Expect:
    def expect(original: RunResult, fixed: RunResult) -> Text | None:
        ev = fixed.evidence
        if fixed.outcome != "ok" or ev is None or any(
                o.kind == "reorder" and o.line == line for o in ev.ops):
            return None
        return T(f"with this change line {line} moves the dimensions instead of reading the "
                 "memory in another shape, and the program runs to the end",
                 f"改动后第 {line} 行移动的是维度，而不是按另一种形状去读内存，程序也能运行到底")
    return expect


def _permuted(ctx: Ctx, call: ast.Call, before: list[int], after: list[int]) -> Fix | None:
    owner = receiver(call)
    args = list(call.args)
    if owner is None or owner == "torch" or call.keywords or not args:
        return None
    if len(args) == 1 and isinstance(args[0], (ast.Tuple, ast.List)):
        args = list(args[0].elts)
    if len(args) != len(after):
        return None
    base = text(call.func.value)  # type: ignore[attr-defined]
    shown = [text(a) for a in args]
    if len(after) <= len(before):
        found = _matching(before, after)
        if found is None:
            return None
        _, order = found
        in_groups = [shown[order.index(j)] for j in range(len(order))]
        new = (f"{base}.reshape({', '.join(in_groups)}).permute("
               f"{', '.join(map(str, order))})")
    else:
        found = _matching(after, before)
        if found is None:
            return None
        _, order = found  # before[i] == groups[order[i]]
        back = [order.index(j) for j in range(len(order))]
        new = f"{base}.permute({', '.join(map(str, back))}).reshape({', '.join(shown)})"
    edit = replace_node(ctx.code, call, new)
    if edit is None:
        return None
    return Fix((edit,), _gone(call.lineno), T(
        f"move the dimensions on line {call.lineno} with permute: `{new}`",
        f"第 {call.lineno} 行用 permute 移动维度：`{new}`"))


def check_view_reorders(ctx: Ctx) -> list[Candidate]:
    if ctx.error is not None or not ctx.evidence.modules:
        return []
    out = []
    for op in ctx.evidence.ops:
        found = SHAPES.match(op.detail) if op.kind == "reorder" else None
        if found is None:
            continue
        before, after = _sizes(found.group("before")), _sizes(found.group("after"))
        if max(len(before), len(after)) < 3:
            continue  # (3, 4) viewed as (4, 3): a lesson's demonstration as often as a slip
        stmt = ctx.flow.statement_at(op.line)
        calls = [c for c in ast.walk(stmt) if isinstance(c, ast.Call)
                 and call_name(c) == op.op] if stmt is not None else []
        fix = _permuted(ctx, calls[0], before, after) if len(calls) == 1 else None
        fill: dict[str, object] = {
            "line": op.line, "op": op.op, "shape": f"({', '.join(map(str, before))})",
            "target_shape": f"({', '.join(map(str, after))})"}
        out.append(Candidate("view-reorders-dims", op.line, 0.8, [("reorder-seen", fill)],
                             [fix] if fix else [], fill, pinned=True))
    return out[:2]


EXCEPTION_CHECKS: tuple[Check, ...] = ()
SILENT_CHECKS: tuple[Check, ...] = (check_view_reorders,)

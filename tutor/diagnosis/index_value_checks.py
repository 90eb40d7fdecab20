"""An index used as a value: ``argmax`` (or ``max(dim).indices``, ``argsort``) returns the
position of the best entry, and arithmetic on it (``reward + gamma * q.argmax(1)``) computes
with positions 0, 1, 2, ... as if they were the values there. The loss trains towards those
numbers and nothing fails.

The recorder's history of each backpropagated loss keeps each op's dtype: an op that made
integer indices from floating-point values, followed (through casts) by arithmetic that made
floating-point values of them, is this mistake, whatever the program computes. The change
tried takes the values instead (``amax``, ``.values``)."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import Edit, Expect, Fix, replace_node
from tutor.diagnosis.flow import Flow, call_name, receiver, text
from tutor.i18n import T, Text
from tutor.sandbox.models import ChainLink, Evidence, RunResult

INDEX_OPS = frozenset({"argmax", "argmin", "max", "min", "argsort", "sort", "topk"})
"""Ops that return positions (``max``/``min``/``sort``/``topk`` with a dim return them as
their second result)."""
ARITHMETIC = frozenset({"add", "sub", "rsub", "mul", "div", "true_divide", "pow", "addcmul"})
CASTS = frozenset({"to", "float", "double", "half", "type", "type_as"})
VALUE_OF = {"argmax": "amax", "argmin": "amin"}


@dataclass(frozen=True)
class IndexUse:
    index: ChainLink
    """The op that made the positions."""
    used: ChainLink
    """The arithmetic that made values of them."""
    backward_line: int


def _integer(link: ChainLink) -> bool:
    return bool(link.dtype) and any(k in (link.dtype or "") for k in ("int64", "int32"))


def _floating(link: ChainLink) -> bool:
    return bool(link.dtype) and "float" in (link.dtype or "")


def _position_takers(stmt: ast.AST, op: str) -> Iterator[tuple[ast.expr, str]]:
    """Where ``stmt`` takes the positions ``op`` gives, each with the expression that takes
    the values instead: ``torch.argmax(q, dim=1)`` -> ``torch.amax(q, dim=1)``,
    ``q.max(1)[1]`` -> ``q.max(1)[0]``, ``q.max(1).indices`` -> ``q.max(1).values``."""
    for node in ast.walk(stmt):
        if isinstance(node, ast.Call) and call_name(node) == op and op in VALUE_OF:
            yield node, re.sub(rf"\b{op}\s*\(", f"{VALUE_OF[op]}(", text(node), count=1)
        elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Call) and \
                call_name(node.value) == op and isinstance(node.slice, ast.Constant) and \
                node.slice.value == 1:
            yield node, f"{text(node.value)}[0]"
        elif isinstance(node, ast.Attribute) and node.attr == "indices" and isinstance(
                node.value, ast.Call) and call_name(node.value) == op:
            yield node, f"{text(node.value)}.values"


def _takes_indices(flow: Flow | None, line: int, op: str) -> bool:
    """Whether the statement on ``line`` takes the positions of a ``max(dim)``-like call,
    whose record holds both results."""
    stmt = flow.statement_at(line) if flow is not None else None
    return stmt is not None and any(True for _ in _position_takers(stmt, op))


def index_uses(ev: Evidence, flow: Flow | None = None) -> list[IndexUse]:
    """Positions computed with as values in the history of a loss the run backpropagated
    (``flow``: the source, which tells which result of a ``max(dim)`` was taken)."""
    found: dict[int, IndexUse] = {}
    for backward in ev.backwards:
        chain = backward.chain  # newest first: a link's consumer is the one before it
        for at, link in enumerate(chain):
            if link.op not in INDEX_OPS or link.line in found:
                continue
            if not (_integer(link) or (link.dtype is None
                                       and _takes_indices(flow, link.line, link.op))):
                continue
            consumer = at - 1
            while consumer >= 0 and chain[consumer].op in CASTS:
                consumer -= 1
            if consumer < 0:
                continue
            used = chain[consumer]
            if used.op in ARITHMETIC and _floating(used):
                found[link.line] = IndexUse(link, used, backward.line)
    return list(found.values())


def _value_edit(flow: Flow, code: str, line: int, op: str) -> tuple[Edit, str] | None:
    """The first of the statement's position takers that an edit can replace."""
    stmt = flow.statement_at(line)
    for node, new in _position_takers(stmt, op) if stmt is not None else ():
        edit = replace_node(code, node, new)
        if edit is not None:
            return edit, new
    return None


def _values_used(line: int) -> Expect:
    def expect(original: RunResult, fixed: RunResult) -> Text | None:
        ev = fixed.evidence
        if fixed.outcome != "ok" or ev is None or not ev.backwards or any(
                u.index.line == line and u.index.dtype for u in index_uses(ev)):
            return None
        return T(f"with this change line {line} gives the values, not their positions, and the "
                 "program runs to the end",
                 f"改动后第 {line} 行给出的是数值本身而不是它们的位置，程序也能运行到底")
    return expect


def check_index_as_value(ctx: Ctx) -> list[Candidate]:
    if ctx.error is not None:
        return []
    out = []
    for use in index_uses(ctx.evidence, ctx.flow):
        index = use.index
        stmt = ctx.flow.statement_at(index.line)
        if stmt is None:
            continue
        found = _value_edit(ctx.flow, ctx.code, index.line, index.op)
        fixes = []
        if found is not None:
            edit, new = found
            fixes.append(Fix((edit,), _values_used(index.line), T(
                f"take the values, not their positions, on line {index.line}: `{new}`",
                f"第 {index.line} 行取数值本身，而不是它们的位置：`{new}`")))
        calls = [n for n in ast.walk(stmt) if isinstance(n, ast.Call)
                 and call_name(n) == index.op]
        name = receiver(calls[0]) if calls else None
        if calls and name in (None, "torch") and calls[0].args:
            name = text(calls[0].args[0])
        fill: dict[str, object] = {
            "line": index.line, "op": index.op, "name": name or index.op,
            "sum_line": use.used.line, "backward_line": use.backward_line,
            "detail": use.used.op}
        out.append(Candidate("index-used-as-value", index.line, 0.8,
                             [("index-computed-with", fill)], fixes, fill, pinned=True))
    return out[:2]


EXCEPTION_CHECKS: tuple[Check, ...] = ()
SILENT_CHECKS: tuple[Check, ...] = (check_index_as_value,)

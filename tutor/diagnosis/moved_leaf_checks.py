"""A ``.grad`` read of a tensor made with ``requires_grad=True`` and then converted on the same
line (``torch.tensor(x, requires_grad=True).cuda()``, ``.to(device)``, ``.double()``): the
conversion is an operation, so the name holds its result, not the leaf, and its ``.grad``
stays None. The run's warning names the line that reads it; the cause is the line that made
the name. The fix asks for the gradient after the conversion, so the name is the leaf.
"""

from __future__ import annotations

import ast

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import Expect, Fix, replace_node
from tutor.diagnosis.flow import text
from tutor.i18n import T, Text
from tutor.sandbox.models import RunResult

NONLEAF_READ = "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed"

CONVERSIONS = frozenset({"cuda", "to", "double", "float", "half", "bfloat16", "cpu", "type",
                         "contiguous", "clone", "view", "reshape", "t"})
"""Methods that return a new tensor computed from the one they are called on."""


def check_moved_leaf(ctx: Ctx) -> list[Candidate]:
    if ctx.error is not None:
        return []
    for warning in ctx.result.warnings:
        if NONLEAF_READ not in warning.message or warning.line is None:
            continue
        found = _made_by_conversion(ctx, warning.line)
        if found is not None:
            return [found]
    return []


def _made_by_conversion(ctx: Ctx, line: int) -> Candidate | None:
    stmt = ctx.flow.statement_at(line)
    if stmt is None:
        return None
    names = [n.value.id for n in ast.walk(stmt) if isinstance(n, ast.Attribute)
             and n.attr == "grad" and isinstance(n.value, ast.Name)]
    for name in dict.fromkeys(names):
        made = ctx.flow.assigned_before(name, line)
        value = ctx.flow.value_of(made) if made is not None else None
        leaf = _leaf_call(value)
        if made is None or value is None or leaf is None:
            continue
        method = value.func.attr if isinstance(value, ast.Call) and isinstance(
            value.func, ast.Attribute) else "?"
        converted = _without_requires_grad(ctx.code, value, leaf)
        if converted is None:
            continue
        edit = replace_node(ctx.code, value, f"{converted}.requires_grad_()")
        if edit is None:
            continue
        fix = Fix((edit,), _leaf_now(name, line), T(
            f"on line {made.lineno} ask for the gradient after `.{method}(...)`: "
            f"`{converted}.requires_grad_()`",
            f"第 {made.lineno} 行在 `.{method}(...)` 之后再要求梯度："
            f"`{converted}.requires_grad_()`"))
        facts = {"line": made.lineno, "fail_line": line, "name": name, "op": method,
                 "expr": text(leaf)}
        return Candidate("leaf-converted-after-requires-grad", made.lineno, 0.9, [
            ("converted-leaf", facts)], [fix], facts)
    return None


def _without_requires_grad(code: str, value: ast.expr, leaf: ast.Call) -> str | None:
    """The learner's text of ``value`` without the ``requires_grad=True`` of ``leaf`` (one
    line, as written: ``[1.,2.]`` stays ``[1.,2.]``); None when it spans lines."""
    keyword = next(k for k in leaf.keywords if k.arg == "requires_grad")
    if value.lineno != value.end_lineno or keyword.lineno != value.lineno or \
            value.end_col_offset is None or keyword.end_col_offset is None:
        return None
    raw = code.splitlines()[value.lineno - 1].encode("utf-8")  # columns count bytes
    start, end = keyword.col_offset, keyword.end_col_offset
    before, after = raw[value.col_offset:start], raw[end:value.end_col_offset]
    if before.rstrip().endswith(b","):  # `f(x, requires_grad=True)`: its comma goes too
        before = before.rstrip()[:-1]
    elif after.lstrip().startswith(b","):  # `f(requires_grad=True, x)`
        after = after.lstrip()[1:].lstrip()
    return (before + after).decode("utf-8")


def _leaf_call(value: ast.expr | None) -> ast.Call | None:
    """The call that made the leaf (a ``requires_grad=True`` keyword), when ``value`` is a
    chain of conversions on it: ``torch.tensor(x, requires_grad=True).cuda()``."""
    if not isinstance(value, ast.Call) or not isinstance(value.func, ast.Attribute) or \
            value.func.attr not in CONVERSIONS:
        return None
    receiver = value.func.value
    while isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Attribute) and \
            receiver.func.attr in CONVERSIONS and not _asks_grad(receiver):
        receiver = receiver.func.value
    return receiver if isinstance(receiver, ast.Call) and _asks_grad(receiver) else None


def _asks_grad(call: ast.Call) -> bool:
    return any(k.arg == "requires_grad" and isinstance(k.value, ast.Constant) and
               k.value.value is True for k in call.keywords)


def _leaf_now(name: str, line: int) -> Expect:
    def expect(original: RunResult, fixed: RunResult) -> Text | None:
        if fixed.outcome != "ok" or any(NONLEAF_READ in w.message for w in fixed.warnings):
            return None
        return T(f"with this change `{name}` is the leaf, and backward() fills `{name}.grad` "
                 f"(line {line} no longer reads the `.grad` of a non-leaf)",
                 f"改动后 `{name}` 就是叶子张量，backward() 会填充 `{name}.grad`"
                 f"（第 {line} 行不再读取非叶子张量的 `.grad`）")
    return expect


EXCEPTION_CHECKS: tuple[Check, ...] = ()
SILENT_CHECKS: tuple[Check, ...] = (check_moved_leaf,)

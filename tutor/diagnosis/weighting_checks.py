"""Values averaged (or summed) to one number before they are weighted one by one: ``log_probs
.mean() * returns`` gives every log-probability the same weight, the sum of the returns (zero
once the returns are normalised), instead of each its own return. The backward pass's chain
shows it: a product of N elements whose input that requires grad is a full reduction of N
elements. The change tried weights the values before reducing them (the reduction's input in
the product); it is kept only where what the program prints then changes."""

from __future__ import annotations

import ast
import math

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import Fix, replace_node
from tutor.diagnosis.flow import Flow, call_name, text
from tutor.diagnosis.verify import prints_else
from tutor.i18n import T

PRODUCTS = frozenset({"mul", "__mul__", "__rmul__", "mul_"})
REDUCTIONS = frozenset({"mean", "sum"})


def _reduced(flow: Flow, node: ast.expr, line: int) -> tuple[ast.expr, str] | None:
    """What ``node`` reduced, where it is a full ``.mean()`` / ``.sum()`` (written there, or
    bound to the name on an earlier line): (the reduced value's expression, the reduction)."""
    value: ast.AST | None = node
    if isinstance(node, ast.Name):
        made = flow.assigned_before(node.id, line, flow.statement_at(line))
        value = flow.value_of(made) if made is not None else None
    if isinstance(value, ast.Call) and call_name(value) in REDUCTIONS and not value.keywords:
        if isinstance(value.func, ast.Attribute) and not value.args and text(
                value.func.value) not in ("torch",):
            return value.func.value, call_name(value) or ""
        if text(value.func) in ("torch.mean", "torch.sum") and len(value.args) == 1:
            return value.args[0], call_name(value) or ""
    return None


def check_reduced_before_weighting(ctx: Ctx) -> list[Candidate]:
    if ctx.error is not None:
        return []
    for backward in ctx.evidence.backwards:
        chain = backward.chain
        for link, inner, source in zip(chain, chain[1:], chain[2:], strict=False):
            if link.op not in PRODUCTS or inner.op not in REDUCTIONS or inner.shape != [] or \
                    inner.args or not link.shape or not source.shape:
                continue
            size = math.prod(link.shape)
            if size < 2 or size != math.prod(source.shape):
                continue
            stmt = ctx.flow.statement_at(link.line)
            products = [n for n in ast.walk(stmt) if isinstance(n, ast.BinOp) and isinstance(
                n.op, ast.Mult)] if stmt is not None else []
            for product in products:
                for operand in (product.left, product.right):
                    found = _reduced(ctx.flow, operand, link.line)
                    if found is None:
                        continue
                    values, how = found
                    edit = replace_node(ctx.code, operand, text(values))
                    if edit is None:
                        continue
                    facts: dict[str, object] = {
                        "line": link.line, "name": text(operand), "op": how, "count": size,
                        "expr": text(values)}
                    return [Candidate("reduced-before-weighting", link.line, 0.8,
                                      [("reduced-then-weighted", facts)], [Fix(
                                          (edit,), prints_else, T(
                                              f"weight each of `{text(values)}` before "
                                              f"reducing: `{text(values)}` in place of "
                                              f"`{text(operand)}` on line {link.line}",
                                              f"先给 `{text(values)}` 的每个元素加权再归约：第 "
                                              f"{link.line} 行用 `{text(values)}` 代替 "
                                              f"`{text(operand)}`"))], facts)]
    return []


EXCEPTION_CHECKS: tuple[Check, ...] = ()
SILENT_CHECKS: tuple[Check, ...] = (check_reduced_before_weighting,)

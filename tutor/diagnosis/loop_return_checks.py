"""A ``return`` indented into a loop: the loop's body ends with it, so the function returns
in the loop's first pass (an ASPP forward that adds one branch of four, an init loop that
returns at the first module it visits, before any layer it meant to initialise). The return
moved out of the loop is the change tried, kept where what the program prints changes.

A loop whose whole body is the return (``for x in items: return x``, the first item), or one
that may skip to its next pass before the return, is an idiom, not this mistake."""

from __future__ import annotations

import ast

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import Edit, Fix
from tutor.diagnosis.verify import prints_else
from tutor.i18n import T


def check_return_in_loop(ctx: Ctx) -> list[Candidate]:
    if ctx.error is not None:
        return []
    out: list[Candidate] = []
    for function in ast.walk(ctx.flow.tree):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for loop in _loops(function):
            last = loop.body[-1]
            if not isinstance(last, ast.Return) or len(loop.body) < 2 or loop.orelse or (
                    last.end_lineno != last.lineno) or _skips(loop):
                continue
            line = ctx.flow.line(loop.lineno)
            indent = line[:len(line) - len(line.lstrip())]
            moved = Edit("replace", last.lineno, indent + ctx.flow.line(last.lineno).strip())
            fill: dict[str, object] = {"line": last.lineno, "before_line": loop.lineno,
                                       "function": function.name}
            out.append(Candidate("return-inside-loop", last.lineno, 0.85, [
                ("returns-in-first-pass", fill)], [
                Fix((moved,), prints_else, T(
                    f"return after the loop: line {last.lineno} out of the loop of line "
                    f"{loop.lineno}",
                    f"在循环结束后再返回：把第 {last.lineno} 行移出第 {loop.lineno} 行的循环"))],
                fill))
    return out


def _skips(loop: ast.For | ast.While) -> bool:
    """The loop's own body has a ``continue`` or ``break``: a pass may end before the
    return (retry until an item fits, then return it), an idiom."""
    stack: list[ast.AST] = list(loop.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Continue, ast.Break)):
            return True
        if not isinstance(node, (ast.For, ast.While, ast.FunctionDef, ast.AsyncFunctionDef,
                                 ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(node))
    return False


def _loops(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.For | ast.While]:
    """The function's own loops (not those of a function or class defined inside it)."""
    found: list[ast.For | ast.While] = []
    stack: list[ast.AST] = list(function.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, (ast.For, ast.While)):
            found.append(node)
        stack.extend(ast.iter_child_nodes(node))
    return sorted(found, key=lambda n: n.lineno)


EXCEPTION_CHECKS: tuple[Check, ...] = ()
SILENT_CHECKS: tuple[Check, ...] = (check_return_in_loop,)

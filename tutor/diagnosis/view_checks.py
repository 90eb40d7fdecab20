"""A row of a tensor modified in place inside ``for row in tensor``: iterating a tensor splits
it into all its rows at once (``unbind``), views that share one history, and autograd forbids
modifying any of them in place ("a function that returns multiple views"). The loop means to
change the tensor row by row; indexing one row at a time (``tensor[i]``) gives a view that
may be modified in place, and the change still reaches the tensor. That rewrite of the loop
is tried. (Making the op out of place, as the message says, would run and change nothing the
loop meant to change.)"""

from __future__ import annotations

import ast

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import Fix, replace_node
from tutor.diagnosis.flow import text
from tutor.diagnosis.verify import runs_clean
from tutor.i18n import T

MULTIPLE_VIEWS = "returns multiple views"


def _base(node: ast.expr) -> str | None:
    """The name a chain of subscripts, attributes and in-place calls starts from."""
    while True:
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.Subscript):
            node = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            node = node.func.value
        else:
            return None


def modified_names(stmt: ast.stmt) -> set[str]:
    """The names the statement modifies in place: ``v -= ...``, ``v[...] = ...``,
    ``v.sub_(...)``."""
    names: set[str] = set()
    if isinstance(stmt, ast.AugAssign):
        names.add(_base(stmt.target) or "")
    if isinstance(stmt, ast.Assign):
        names.update(_base(t) or "" for t in stmt.targets if isinstance(t, ast.Subscript))
    for node in ast.walk(stmt):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr.endswith("_") and not node.func.attr.startswith("_"):
            names.add(_base(node.func.value) or "")
    names.discard("")
    return names


def effect_dropped(ctx: Ctx, stmt: ast.stmt) -> bool:
    """Whether making ``stmt``'s in-place change out of place would drop what it was for:
    the tensor changed is a row the loop iterates (the change was meant for the whole), or a
    parameter of the function that holds it, which the function does not return (the
    change was meant for the caller's tensor)."""
    names = modified_names(stmt)
    if any(isinstance(a, ast.For) and _element_of(a.target, a.iter, n) is not None
           for a in ctx.flow.ancestors(stmt) for n in names):
        return True
    function = ctx.flow.function_at(stmt.lineno)
    if function is None:
        return False
    params = {a.arg for a in function.args.posonlyargs + function.args.args +
              function.args.kwonlyargs}
    returned = {n.id for r in ast.walk(function) if isinstance(r, ast.Return)
                and r.value is not None for n in ast.walk(r.value) if isinstance(n, ast.Name)}
    return bool(names & params - returned)


def _iterated(loop: ast.For, name: str) -> ast.expr | None:
    """The tensor expression whose rows the loop binds to ``name``: ``for name in t``,
    ``for name, m in zip(t, ms)``, ``for i, (name, m) in enumerate(zip(t, ms))``."""
    found = _element_of(loop.target, loop.iter, name)
    if found is None or not _plain(found):
        return None  # a call or an expression: indexing it would compute it again
    return found


def _plain(node: ast.expr) -> bool:
    """A name, an attribute or an index by constants and names (``x``, ``self.w``,
    ``batch[0]``): read again, it is the same tensor."""
    if isinstance(node, ast.Name):
        return True
    if isinstance(node, ast.Attribute):
        return _plain(node.value)
    if isinstance(node, ast.Subscript):
        return _plain(node.value) and all(isinstance(n, (ast.Constant, ast.Name, ast.Tuple,
                                                         ast.Slice, ast.UnaryOp, ast.USub))
                                          for n in ast.walk(node.slice))
    return False


def _element_of(target: ast.expr, source: ast.expr | None, name: str) -> ast.expr | None:
    """What ``target`` unpacks ``name`` from, matching ``zip`` and ``enumerate`` to the
    tuples they give."""
    if isinstance(target, ast.Name):
        return source if target.id == name else None
    if not (isinstance(target, ast.Tuple) and isinstance(source, ast.Call) and isinstance(
            source.func, ast.Name) and source.func.id in ("zip", "enumerate")):
        return None
    parts: list[ast.expr | None] = list(source.args) if source.func.id == "zip" else \
        [None, *source.args[:1]]
    for element, part in zip(target.elts, parts, strict=False):
        found = _element_of(element, part, name)
        if found is not None:
            return found
    return None


def _row_loops(ctx: Ctx, stmt: ast.stmt, name: str) -> list[tuple[ast.For, str]]:
    """The loops whose rows reach ``name`` in ``stmt``: around it, or, where ``name`` is a
    parameter of the function that holds it, around a call of that function that passes a
    loop's row there (``for t in tensor: norm_(t)``). Each with the loop's own name for it."""
    found = [(a, name) for a in ctx.flow.ancestors(stmt) if isinstance(a, ast.For)
             and _iterated(a, name) is not None]
    function = ctx.flow.function_at(stmt.lineno)
    if found or function is None:
        return found
    for call, arg in ctx.flow.arguments_for(function, name):
        if isinstance(arg, ast.Name):
            found += [(a, arg.id) for a in ctx.flow.ancestors(call) if isinstance(a, ast.For)
                      and _iterated(a, arg.id) is not None]
    return found[:1]


def check_iterated_rows_modified(ctx: Ctx) -> list[Candidate]:
    if MULTIPLE_VIEWS not in ctx.message:
        return []
    fail, stmt = ctx.failing_statement()
    if stmt is None:
        return []
    for name in sorted(modified_names(stmt)):
        loops = _row_loops(ctx, stmt, name)
        if not loops:
            continue
        loop, row = loops[0]
        rows = _iterated(loop, row)
        assert rows is not None
        taken = ctx.flow.names_in(ctx.flow.scope_of(loop))
        index = next(n for n in ("i", "j", "k", "row_index") if n not in taken)
        source = text(rows)
        new = f"({source}[{index}] for {index} in range(len({source})))"
        edit = replace_node(ctx.code, rows, new)
        fill: dict[str, object] = {"line": loop.lineno, "fail_line": fail, "name": row,
                                   "expr": source, "new": new}
        fixes = [Fix((edit,), runs_clean, T(
            f"on line {loop.lineno} index the rows of `{source}` one at a time instead of "
            f"iterating it: `{new}`",
            f"第 {loop.lineno} 行逐个索引 `{source}` 的行，而不是直接迭代它：`{new}`"))] \
            if edit is not None else []
        return [Candidate("iterated-rows-modified", loop.lineno, 0.85,
                          [("rows-from-iteration", fill)], fixes, fill)]
    return []


EXCEPTION_CHECKS: tuple[Check, ...] = (check_iterated_rows_modified,)
SILENT_CHECKS: tuple[Check, ...] = ()

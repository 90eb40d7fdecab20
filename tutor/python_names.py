"""What a piece of Python source names: the names a snippet binds and an expression reads
(the stdlib's :mod:`symtable` does the scoping), dotted names, a tree's nodes, and whether
it parses at all.

The linter uses the names to catch a check that names a variable the reference solution
never defines (a typo in ``expr`` would otherwise only show up as a confusing grading
failure); grading and diagnosis read dotted names (``torch.nn.functional.relu``) and walk
trees. Only the source is looked at; nothing is run.
"""

from __future__ import annotations

import ast
import builtins
import symtable
import threading
from collections.abc import Iterator

from tutor import syntax_tree

BUILTIN_NAMES = frozenset(dir(builtins))

_FLAT: dict[int, tuple[ast.AST, tuple[ast.AST, ...]]] = {}
_FLAT_LOCK = threading.Lock()


def parses(code: str) -> bool:
    """Whether ``code`` is valid Python (what cannot parse is never run)."""
    try:
        syntax_tree.parse(code)
    except SyntaxError:
        return False
    return True


def nodes(tree: ast.AST) -> tuple[ast.AST, ...]:
    """Every node of ``tree``, in ``ast.walk`` order, listed once per tree: grading looks at
    one submission's tree with a dozen rules, and ``ast.walk`` costs more than the rules."""
    key = id(tree)
    with _FLAT_LOCK:
        hit = _FLAT.get(key)
    if hit is not None and hit[0] is tree:
        return hit[1]
    flat = tuple(ast.walk(tree))
    with _FLAT_LOCK:
        if len(_FLAT) >= 64:  # the trees of the submissions being graded now
            _FLAT.clear()
        _FLAT[key] = (tree, flat)
    return flat


def dotted(node: ast.AST) -> str | None:
    """``torch.nn.functional.relu`` for a Name/Attribute chain; None for anything else."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _tables(top: symtable.SymbolTable) -> Iterator[symtable.SymbolTable]:
    """``top`` and every scope inside it (functions, classes, lambdas, comprehensions)."""
    stack = [top]
    while stack:
        table = stack.pop()
        yield table
        stack.extend(table.get_children())


def _star_import(tree: ast.AST) -> bool:
    return any(isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names)
               for node in ast.walk(tree))


def defined_names(source: str) -> set[str] | None:
    """Names a module-level snippet binds (a ``global`` assignment inside a function
    counts); ``None`` when unknowable (a syntax error or ``from x import *``), so callers
    skip the check instead of guessing."""
    try:
        tree = syntax_tree.parse(source)
        top = symtable.symtable(source, "<snippet>", "exec")
    except (SyntaxError, ValueError):  # ValueError: a NUL byte, before Python 3.12
        return None
    if _star_import(tree):
        return None
    names = {s.get_name() for s in top.get_symbols() if s.is_assigned() or s.is_imported()}
    for table in _tables(top):
        if table is not top:
            names.update(s.get_name() for s in table.get_symbols()
                         if s.is_declared_global() and s.is_assigned())
    return names


def free_names(expression: str) -> set[str]:
    """Names an expression reads that it does not bind itself (lambda parameters and
    comprehension targets are local to them; a walrus binds). Raises ``SyntaxError`` for a
    bad expression."""
    top = symtable.symtable(expression.strip(), "<expression>", "eval")
    read: set[str] = set()
    bound: set[str] = set()
    for table in _tables(top):
        for symbol in table.get_symbols():
            if symbol.is_global():  # every name of the expression's own scope, too
                if symbol.is_referenced():
                    read.add(symbol.get_name())
                if symbol.is_assigned():
                    bound.add(symbol.get_name())
    return read - bound

"""Which names a snippet of Python defines, and which names an expression reads.

The linter uses these to catch a check that names a variable the reference solution never
defines (a typo in ``expr`` would otherwise only show up as a confusing grading failure).
Only the syntax tree is looked at; nothing is run.
"""

from __future__ import annotations

import ast
import builtins
import threading

BUILTIN_NAMES = frozenset(dir(builtins))

_FLAT: dict[int, tuple[ast.AST, tuple[ast.AST, ...]]] = {}
_FLAT_LOCK = threading.Lock()


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


class _ModuleBindings(ast.NodeVisitor):
    """Names bound at module level: assignments, defs, imports, for/with/except targets,
    walrus, and ``global`` declarations inside functions. Function and class bodies are
    their own scopes and are not entered (except for ``global``)."""

    def __init__(self) -> None:
        self.names: set[str] = set()
        self.star_import = False

    def _targets(self, target: ast.AST) -> None:
        for node in ast.walk(target):
            if isinstance(node, ast.Name):
                self.names.add(node.id)
            elif isinstance(node, ast.Starred) and isinstance(node.value, ast.Name):
                self.names.add(node.value.id)

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._targets(target)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._targets(node.target)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._targets(node.target)
        self.generic_visit(node)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self._targets(node.target)
        self.generic_visit(node)

    def visit_For(self, node: ast.For | ast.AsyncFor) -> None:
        self._targets(node.target)
        self.generic_visit(node)

    visit_AsyncFor = visit_For

    def visit_With(self, node: ast.With | ast.AsyncWith) -> None:
        for item in node.items:
            if item.optional_vars is not None:
                self._targets(item.optional_vars)
        self.generic_visit(node)

    visit_AsyncWith = visit_With

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name:
            self.names.add(node.name)
        self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.names.add(alias.asname or alias.name.split(".")[0])

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for alias in node.names:
            if alias.name == "*":
                self.star_import = True
            else:
                self.names.add(alias.asname or alias.name)

    def _scope(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        self.names.add(node.name)
        for inner in ast.walk(node):
            if isinstance(inner, ast.Global):
                self.names.update(inner.names)

    visit_FunctionDef = _scope
    visit_AsyncFunctionDef = _scope
    visit_ClassDef = _scope

    def visit_Lambda(self, node: ast.Lambda) -> None:
        """Lambda parameters are local to it."""

    def _comprehension(self, node: ast.AST) -> None:
        """Comprehension targets are local to it; a walrus inside still binds outside."""
        for inner in ast.walk(node):
            if isinstance(inner, ast.NamedExpr):
                self._targets(inner.target)

    visit_ListComp = _comprehension
    visit_SetComp = _comprehension
    visit_DictComp = _comprehension
    visit_GeneratorExp = _comprehension


def defined_names(source: str) -> set[str] | None:
    """Names a module-level snippet binds; ``None`` when unknowable (syntax error or
    ``from x import *``), so callers skip the check instead of guessing."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    visitor = _ModuleBindings()
    visitor.visit(tree)
    if visitor.star_import:
        return None
    return visitor.names


def free_names(expression: str) -> set[str]:
    """Names an expression reads that it does not bind itself (lambda parameters and
    comprehension targets are excluded). Raises ``SyntaxError`` for a bad expression."""
    tree = ast.parse(expression.strip(), mode="eval")
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.comprehension):
            bound.update(n.id for n in ast.walk(node.target) if isinstance(n, ast.Name))
        elif isinstance(node, ast.Lambda):
            args = node.args
            for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
                bound.add(arg.arg)
            for extra in (args.vararg, args.kwarg):
                if extra is not None:
                    bound.add(extra.arg)
        elif isinstance(node, ast.NamedExpr) and isinstance(node.target, ast.Name):
            bound.add(node.target.id)
    read = {
        node.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
    }
    return read - bound

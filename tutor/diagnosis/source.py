"""Reads the learner's source (never runs it): the failing call on a line, the statements that
produced a variable, and whether a line sits inside ``no_grad`` or a loop."""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property

from tutor import syntax_tree
from tutor.diagnosis.calls import Calls
from tutor.python_names import dotted

NO_GRAD_CONTEXTS = frozenset({"no_grad", "inference_mode", "set_grad_enabled"})
BUILTIN_NAMES = frozenset(dir(builtins))
REQUIRES_GRAD_MAKERS = frozenset({"Parameter", "requires_grad_"})
TORCH_ROOTS = frozenset({"torch", "F", "np", "numpy", "math", "nn"})
"""Names whose calls are library functions, never learner modules with parameters."""
CONTAINER_FILLERS = frozenset({"append", "extend", "insert", "add", "update", "setdefault"})
INPLACE_UPDATE_METHODS = frozenset({"sub_", "add_", "mul_", "div_", "copy_", "zero_", "fill_"})


SOURCE_TEXT = "tutor_source"
"""The attribute :func:`parse` gives each one-line expression: its text as the learner wrote it."""


def parse(code: str) -> ast.Module | None:
    """The module, each one-line expression carrying its own source text (see
    :func:`source_text`); None for code Python cannot read."""
    try:
        tree = syntax_tree.parse(code)
    except (SyntaxError, ValueError):
        return None
    lines = [line.encode("utf-8") for line in code.splitlines()]
    for node in ast.walk(tree):
        if isinstance(node, ast.expr) and node.end_lineno == node.lineno and (
                node.end_col_offset is not None and 0 < node.lineno <= len(lines)):
            raw = lines[node.lineno - 1][node.col_offset:node.end_col_offset]
            setattr(node, SOURCE_TEXT, raw.decode("utf-8", "replace"))
    return tree


def source_text(node: ast.AST) -> str:
    """The node as the learner wrote it (``x.view(-1,4)``, ``"gpu"``), never rebuilt from
    the tree, where :func:`parse` kept it; else its unparsed form."""
    kept = getattr(node, SOURCE_TEXT, None)
    return kept if isinstance(kept, str) else ast.unparse(node)


def call_name(call: ast.Call) -> str:
    """Last part of what is called: ``backward`` for ``loss.backward()``, ``mm`` for torch.mm."""
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return ""


def _parents(tree: ast.AST) -> dict[ast.AST, ast.AST]:
    return {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def _is_grad_off_context(item: ast.withitem) -> bool:
    expr = item.context_expr
    if not isinstance(expr, ast.Call):
        return False
    if call_name(expr) not in NO_GRAD_CONTEXTS:
        return False
    if call_name(expr) == "set_grad_enabled":
        arg = expr.args[0] if expr.args else None
        return isinstance(arg, ast.Constant) and arg.value is False
    return True


@dataclass
class CallSite:
    """A call on the failing line, in the learner's own spelling."""

    node: ast.Call
    name: str
    callee: str
    receiver: str | None
    args: list[str]

    @property
    def is_method(self) -> bool:
        return self.receiver is not None


@dataclass
class Source:
    """The learner's module with the lookups the engine and pitfall rules need."""

    tree: ast.Module
    parents: dict[ast.AST, ast.AST] = field(default_factory=dict)

    @classmethod
    def of(cls, code: str) -> Source | None:
        tree = parse(code)
        if tree is None:
            return None
        return cls(tree=tree, parents=_parents(tree))

    # ------------------------------------------------------------------ structure

    @cached_property
    def calls(self) -> Calls:
        return Calls(self.tree, self.parents)

    def ancestors(self, node: ast.AST) -> Iterator[ast.AST]:
        while node in self.parents:
            node = self.parents[node]
            yield node

    def in_no_grad(self, node: ast.AST) -> bool:
        return any(
            isinstance(a, ast.With) and any(_is_grad_off_context(i) for i in a.items)
            for a in self.ancestors(node)
        )

    def enclosing_loop(self, node: ast.AST) -> ast.For | ast.While | None:
        for a in self.ancestors(node):
            if isinstance(a, (ast.For, ast.While)):
                return a
            if isinstance(a, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                return None
        return None

    def statements_at(self, line: int) -> list[ast.stmt]:
        """The innermost simple statements that span ``line``."""
        found = [
            node
            for node in ast.walk(self.tree)
            if isinstance(node, ast.stmt)
            and not isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.For, ast.While, ast.If,
                                      ast.With, ast.Try, ast.AsyncFunctionDef))
            and node.lineno <= line <= (node.end_lineno or node.lineno)
        ]
        return found

    def calls_at(self, line: int) -> list[CallSite]:
        """Calls on the statement at ``line``, outermost first."""
        sites: list[CallSite] = []
        for stmt in self.statements_at(line):
            for node in ast.walk(stmt):
                if isinstance(node, ast.Call):
                    sites.append(self.call_site(node))
        return sites

    @staticmethod
    def call_site(node: ast.Call) -> CallSite:
        func = node.func
        receiver = None
        callee = source_text(func)
        if isinstance(func, ast.Attribute):
            root = dotted(func.value)
            is_library = root is not None and root.split(".")[0] in TORCH_ROOTS
            is_module_attr = isinstance(func.value, ast.Name) and func.value.id == "self"
            if not is_library and not is_module_attr:
                receiver = source_text(func.value)
            if receiver is not None:
                receiver = code_text(func.value)
        args = [code_text(a) for a in node.args]
        return CallSite(node=node, name=call_name(node), callee=callee, receiver=receiver,
                        args=args)

    def bound_names(self) -> set[str]:
        """Names the module binds by import, def, class, assignment or loop."""
        names: set[str] = set(BUILTIN_NAMES)
        for node in ast.walk(self.tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names.update((a.asname or a.name).split(".")[0] for a in node.names)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
                if not isinstance(node, ast.ClassDef):  # a class has no arguments
                    names.update(a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg))
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
        return names

    # ------------------------------------------------------------------ data flow

    def assignments_to(self, name: str) -> list[tuple[ast.stmt, ast.expr]]:
        """Every ``name = expr`` / ``name op= expr`` / ``for name in expr`` in the module."""
        out: list[tuple[ast.stmt, ast.expr]] = []
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Assign):
                if any(name in _target_names(t) for t in node.targets):
                    out.append((node, node.value))
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                if node.value is not None and name in _target_names(node.target):
                    out.append((node, node.value))
            elif isinstance(node, ast.For) and name in _target_names(node.target):
                out.append((node, node.iter))
            elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
                # values.append(expr): the container now holds what expr computed
                call = node.value
                if (
                    isinstance(call.func, ast.Attribute)
                    and call.func.attr in CONTAINER_FILLERS
                    and dotted(call.func.value) == name
                ):
                    out.extend((node, arg) for arg in call.args)
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Subscript) and dotted(target.value) == name:
                        out.append((node, node.value))
        return out

    def source_of(self, expr: str | None, before_line: int | None = None) -> list[ast.AST]:
        """The expressions that produced ``expr`` (a backward slice through assignments),
        as (statement, value) nodes; a name assigned several times contributes each
        assignment made before ``before_line`` (or any, in a loop or when none is before)."""
        if not expr:
            return []
        try:
            start = syntax_tree.parse(expr, mode="eval").body
        except SyntaxError:
            return []
        seen: set[str] = set()
        nodes: list[ast.AST] = [start]
        pending = list(_names_in(start))
        while pending and len(seen) < 60:
            name = pending.pop()
            if name in seen:
                continue
            seen.add(name)
            assigns = self.assignments_to(name)
            if before_line is not None:
                earlier = [(s, v) for s, v in assigns if s.lineno <= before_line]
                assigns = earlier or assigns
            if not assigns:  # a parameter: what the calls give it
                for _, given in self.calls.arguments_named(name):
                    nodes.append(given)
                    pending.extend(_names_in(given))
            for stmt, value in assigns:
                nodes.extend((stmt, value))
                pending.extend(_names_in(value))
                if isinstance(stmt, ast.AugAssign):
                    pending.extend(_names_in(stmt.target))
                for call in (n for n in ast.walk(value) if isinstance(n, ast.Call)):
                    for ret in self.calls.returned(call):  # x = make(): what make returns
                        nodes.extend((ret, ret.value) if ret.value is not None else (ret,))
                        pending.extend(_names_in(ret))
        return nodes

    def mutations_of(self, name: str) -> list[ast.AST]:
        """Statements that change ``name`` without assigning it: ``name.requires_grad = x``,
        ``name.requires_grad_()``, ``name.detach_()``."""
        out: list[ast.AST] = []
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Attribute) and dotted(target.value) == name:
                        out.append(node)
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and dotted(node.func.value) == name
                and node.func.attr.endswith("_")
            ):
                out.append(node)
        return out


def code_text(node: ast.expr) -> str:
    """The expression as code that stays valid with a method call appended: ``(x * 2)``."""
    text = source_text(node)
    simple = (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant)
    return text if isinstance(node, simple) else f"({text})"


def _target_names(target: ast.AST) -> set[str]:
    if isinstance(target, ast.Name):
        return {target.id}
    if isinstance(target, (ast.Tuple, ast.List)):
        return set().union(*(_target_names(t) for t in target.elts)) if target.elts else set()
    if isinstance(target, ast.Starred):
        return _target_names(target.value)
    return set()


def _names_in(node: ast.AST) -> Iterable[str]:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load):
            yield sub.id


def method_calls(node: ast.AST | None, name: str) -> list[ast.Call]:
    """The calls of a method ``name`` under ``node`` (``x.view(...)``, ``labels.mean()``), in
    the order of ``ast.walk``: what a message about that method's receiver is about."""
    if node is None:
        return []
    return [n for n in ast.walk(node) if isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute) and n.func.attr == name]


def calls_in(nodes: Iterable[ast.AST]) -> set[str]:
    return {call_name(n) for node in nodes for n in ast.walk(node) if isinstance(n, ast.Call)}


def makes_requires_grad(nodes: Iterable[ast.AST], source: Source) -> bool:
    """Whether something in these nodes may require grad: ``requires_grad=True``,
    ``requires_grad_()``, ``nn.Parameter``, a later ``x.requires_grad = True``, or a call of a
    learner object (a module has parameters). Unknown counts as yes: callers use a False
    answer to claim that nothing requires grad, so it must be certain: a name the code never
    binds (the code is partial, or it comes from elsewhere) counts as yes."""
    bound = source.bound_names()
    for node in nodes:
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load) and sub.id not in bound:
                return True
    for node in nodes:
        for sub in ast.walk(node):
            if isinstance(sub, ast.keyword) and sub.arg == "requires_grad" and not _is_false(
                sub.value
            ):
                return True
            if isinstance(sub, ast.Call) and _may_bring_parameters(sub) and not (
                    isinstance(sub.func, ast.Name) and source.calls.returned(sub)):
                return True  # a function whose returns are known: those are in the nodes
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load) and any(
                _turns_requires_grad_on(m) for m in source.mutations_of(sub.id)
            ):
                return True
    return False


def _may_bring_parameters(call: ast.Call) -> bool:
    """``nn.Parameter(...)``, ``x.requires_grad_()``, or a call of a learner function or class
    (a module has parameters); builtins such as ``len`` and ``float`` do not."""
    name = call_name(call)
    if name in REQUIRES_GRAD_MAKERS:
        return not (call.args and _is_false(call.args[0]))
    func = call.func
    if isinstance(func, ast.Name):
        return func.id not in BUILTIN_NAMES
    root = dotted(func.value) if isinstance(func, ast.Attribute) else None
    return root is not None and root.split(".")[0] == "self"


def _turns_requires_grad_on(mutation: ast.AST) -> bool:
    """``x.requires_grad = True`` (or any non-False value) or ``x.requires_grad_()``."""
    if isinstance(mutation, ast.Assign):
        return any(
            isinstance(t, ast.Attribute) and t.attr == "requires_grad" for t in mutation.targets
        ) and not _is_false(mutation.value)
    if isinstance(mutation, ast.Call) and call_name(mutation) == "requires_grad_":
        return not (mutation.args and _is_false(mutation.args[0]))
    return False


def _is_false(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is False

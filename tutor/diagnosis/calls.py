"""The learner's functions and their calls (AST, never run): who calls a function, what each
call gives a parameter, what a call returns. The source analyses (:mod:`flow`, :mod:`source`)
follow a value through them, so the same mistake is found whether the code that makes a
tensor and the code that uses it sit in one block or on both sides of a call."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from functools import cached_property

from tutor.python_names import dotted

Function = ast.FunctionDef | ast.AsyncFunctionDef
CALLED_BY_PYTHON = frozenset({"forward", "__call__", "__init__"})
"""Methods a program calls through the instance or the class, never by their name."""


def _called(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else (
        func.id if isinstance(func, ast.Name) else "")


@dataclass
class Calls:
    tree: ast.Module
    parents: dict[ast.AST, ast.AST] = field(default_factory=dict)

    @cached_property
    def functions(self) -> list[Function]:
        return [n for n in ast.walk(self.tree) if isinstance(n, (ast.FunctionDef,
                                                                   ast.AsyncFunctionDef))]

    @cached_property
    def calls(self) -> list[ast.Call]:
        return sorted((n for n in ast.walk(self.tree) if isinstance(n, ast.Call)),
                      key=lambda n: (n.lineno, n.col_offset))

    @cached_property
    def instances(self) -> dict[str, set[str]]:
        """Class name -> the names its instances are bound to (``net``, ``self.block``)."""
        out: dict[str, set[str]] = {}
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                for target in node.targets:
                    name = dotted(target)
                    if name is not None:
                        out.setdefault(_called(node.value), set()).add(name)
        return out

    def is_method(self, function: ast.AST) -> bool:
        return isinstance(self.parents.get(function), ast.ClassDef) and not any(
            isinstance(d, ast.Name) and d.id == "staticmethod"
            for d in getattr(function, "decorator_list", []))

    def parameter(self, function: Function, name: str) -> tuple[int | None, ast.arg] | None:
        """``(position, arg)`` of the parameter ``name`` as callers pass it (``self`` not
        counted; position None for a keyword-only one)."""
        args = function.args
        positional = [*args.posonlyargs, *args.args]
        if self.is_method(function):
            positional = positional[1:]
        for index, arg in enumerate(positional):
            if arg.arg == name:
                return index, arg
        return next(((None, a) for a in args.kwonlyargs if a.arg == name), None)

    def calls_of(self, function: Function) -> list[ast.Call]:
        """``f(...)``, ``obj.method(...)``; a module's ``forward`` through its instances
        (``net(...)`` where ``net = Net(...)``) and ``__init__`` through the class."""
        owner = self.parents.get(function)
        name = function.name
        if isinstance(owner, ast.ClassDef) and name in ("forward", "__call__"):
            made = self.instances.get(owner.name, set())
            return [c for c in self.calls if dotted(c.func) in made]
        if isinstance(owner, ast.ClassDef) and name == "__init__":
            return [c for c in self.calls if _called(c) == owner.name]
        if isinstance(owner, ast.ClassDef):
            return [c for c in self.calls
                    if isinstance(c.func, ast.Attribute) and c.func.attr == name]
        return [c for c in self.calls if isinstance(c.func, ast.Name) and c.func.id == name]

    def arguments_for(self, function: Function, name: str) -> list[tuple[ast.Call, ast.expr]]:
        """What each call of the function gives its parameter ``name``."""
        found = self.parameter(function, name)
        if found is None:
            return []
        position, arg = found
        out: list[tuple[ast.Call, ast.expr]] = []
        for call in self.calls_of(function):
            given = next((k.value for k in call.keywords if k.arg == arg.arg), None)
            if given is None and position is not None and position < len(call.args) and not any(
                    isinstance(a, ast.Starred) for a in call.args[:position + 1]):
                given = call.args[position]
            if given is not None:
                out.append((call, given))
        return out

    def arguments_named(self, name: str) -> list[tuple[ast.Call, ast.expr]]:
        """What the calls give every parameter called ``name``, of any function."""
        return [pair for fn in self.functions for pair in self.arguments_for(fn, name)]

    def returned(self, call: ast.AST) -> list[ast.Return]:
        """The ``return`` statements of the learner's function that ``call`` calls by its
        name (``make()``, ``self.make()``); none for a call of anything else."""
        if not isinstance(call, ast.Call):
            return []
        name = _called(call)
        out: list[ast.Return] = []
        for fn in self.functions:
            if fn.name == name and name not in CALLED_BY_PYTHON:
                out.extend(r for r in ast.walk(fn) if isinstance(r, ast.Return)
                           and r.value is not None and self.function_of(r) is fn)
        return out

    def function_of(self, node: ast.AST) -> Function | None:
        """The innermost function that holds the node."""
        while node in self.parents:
            node = self.parents[node]
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                return node
        return None

    def statement_at(self, line: int) -> ast.stmt | None:
        """The innermost statement that starts on the line."""
        found = None
        for node in ast.walk(self.tree):
            if isinstance(node, ast.stmt) and node.lineno == line and (
                    found is None or node.col_offset >= found.col_offset):
                found = node
        return found

    def hands_on(self, line: int) -> bool:
        """Whether the statement on the line only hands its function's own parameters,
        unchanged, to one call of the learner's own (``return self.layers(*args,
        **kwargs)``, ``return self.net(x)``): what that call fails on came from the
        function's caller."""
        stmt = self.statement_at(line)
        function = self.function_of(stmt) if stmt is not None else None
        call = getattr(stmt, "value", None)
        if function is None or not isinstance(stmt, (ast.Return, ast.Assign, ast.Expr)) or (
                not isinstance(call, ast.Call)):
            return False
        args = function.args
        params = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
        starred = {a.arg for a in (args.vararg, args.kwarg) if a is not None}
        given = [a.value if isinstance(a, ast.Starred) else a for a in call.args] + [
            k.value for k in call.keywords]
        names = [g.id for g in given if isinstance(g, ast.Name)]
        if not given or len(names) != len(given) or not set(names) <= params | starred:
            return False
        changed = {n.id for s in ast.walk(function) if isinstance(s, ast.stmt)
                   and s.lineno < line for n in ast.walk(s)
                   if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        return not changed & set(names) and self._learners(call.func)

    def _learners(self, func: ast.expr) -> bool:
        """A callee of the learner's own: a module or function kept on ``self``
        (``self.layers``), or a function the program defines; not a torch op or a method of
        a tensor."""
        if isinstance(func, ast.Attribute):
            return isinstance(func.value, ast.Name) and func.value.id == "self"
        return isinstance(func, ast.Name) and any(f.name == func.id for f in self.functions)

    def line_that_gave(self, frames: list[int]) -> int | None:
        """Of a failing run's learner frames (lines, outermost first), the line where the
        values the failing call got were given: the innermost frame's, or its caller's when
        that frame only :meth:`hands_on` its parameters (and so on outwards)."""
        if not frames:
            return None
        index = len(frames) - 1
        while index > 0 and self.hands_on(frames[index]):
            index -= 1
        return frames[index]

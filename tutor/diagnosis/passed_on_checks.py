"""A parameter that a function of the program takes and never reads, though the program
passes it a value, while the function calls a function of the program that takes a parameter
of that name and is not given it (a ``training`` flag given to a model's forward that calls
its masking block without it): the inner call always runs with its own default, so the value
the caller chose changes nothing. The change passes it on; its re-run shows what it changes.

Only that shape is said: a parameter that is merely unused (a callback's argument, a batch
index) may well be meant, and nothing would show otherwise."""

from __future__ import annotations

import ast

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import Fix, replace_node
from tutor.diagnosis.flow import call_name, text
from tutor.diagnosis.verify import prints_else
from tutor.i18n import T

Function = ast.FunctionDef | ast.AsyncFunctionDef


def check_argument_not_passed_on(ctx: Ctx) -> list[Candidate]:
    if ctx.error is not None:
        return []
    tree = ctx.flow.tree
    classes = {c.name: c for c in ast.walk(tree) if isinstance(c, ast.ClassDef)}
    out: list[Candidate] = []
    for owner, function in _functions(tree):
        read = {n.id for n in ast.walk(function) if isinstance(n, ast.Name)
                and isinstance(n.ctx, ast.Load)}
        names = [a.arg for a in (*function.args.args, *function.args.kwonlyargs)
                 if a.arg not in ("self", "cls") and a.arg not in read]
        for name in names:
            if not _given_by_program(tree, owner, function, name):
                continue
            for call in _calls_in(function):
                inner = _callee(tree, classes, owner, call)
                if inner is None or inner is function or not _takes_default(inner, name) or any(
                        k.arg in (name, None) for k in call.keywords):
                    continue
                new = ast.unparse(ast.Call(call.func, call.args, [
                    *call.keywords, ast.keyword(name, ast.Name(name, ast.Load()))]))
                edit = replace_node(ctx.code, call, new)
                if edit is None:
                    continue
                callee = text(call.func)
                where = f"{owner.name}.{function.name}" if owner else function.name
                fill: dict[str, object] = {"line": call.lineno, "name": name,
                                           "function": where, "callee": callee}
                out.append(Candidate("argument-not-passed-on", call.lineno, 0.8, [
                    ("argument-unread", fill)],
                    [Fix((edit,), prints_else, T(
                        f"pass `{name}` on to `{callee}` on line {call.lineno}: `{new}`",
                        f"第 {call.lineno} 行把 `{name}` 传给 `{callee}`：`{new}`"))], fill))
                break
    return out


def _functions(tree: ast.Module) -> list[tuple[ast.ClassDef | None, Function]]:
    """The program's functions and methods, each with its class (None: a function)."""
    out: list[tuple[ast.ClassDef | None, Function]] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.append((None, node))
        elif isinstance(node, ast.ClassDef):
            out.extend((node, f) for f in node.body
                       if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)))
    return out


def _calls_in(function: Function) -> list[ast.Call]:
    return sorted((n for n in ast.walk(function) if isinstance(n, ast.Call)),
                  key=lambda c: (c.lineno, c.col_offset))


def _instances(tree: ast.Module, cls: str) -> set[str]:
    """The names the program binds to an object of ``cls`` (``model``, ``self.masking``)."""
    return {text(target) for node in ast.walk(tree) if isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Call) and call_name(node.value) == cls
            for target in node.targets}


def _given_by_program(tree: ast.Module, owner: ast.ClassDef | None, function: Function,
                      name: str) -> bool:
    """A call of the program gives ``function`` a value for ``name`` (by keyword)."""
    if owner is not None and function.name == "forward":
        callers = _instances(tree, owner.name)
        calls = [c for c in ast.walk(tree) if isinstance(c, ast.Call)
                 and (text(c.func) in callers or call_name(c) == "forward")]
    else:
        calls = [c for c in ast.walk(tree) if isinstance(c, ast.Call)
                 and call_name(c) == function.name]
    return any(k.arg == name for c in calls if c not in ast.walk(function) for k in c.keywords)


def _callee(tree: ast.Module, classes: dict[str, ast.ClassDef], owner: ast.ClassDef | None,
            call: ast.Call) -> Function | None:
    """The function of the program a call runs: a function by its name, a method of the
    same class (``self.helper(...)``), or the forward of the program's class whose object
    the attribute holds (``self.masking(...)``)."""
    func = call.func
    if isinstance(func, ast.Name):
        found = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and n.name == func.id]
        return found[0] if len(found) == 1 else None
    if owner is None or not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
                             and func.value.id == "self"):
        return None
    for node in owner.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == func.attr:
            return node
    held = {call_name(n.value) for n in ast.walk(owner) if isinstance(n, ast.Assign)
            and isinstance(n.value, ast.Call) and any(text(t) == f"self.{func.attr}"
                                                      for t in n.targets)}
    if len(held) != 1:
        return None
    cls = classes.get(next(iter(held)))
    if cls is None:
        return None
    return next((f for f in cls.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and f.name == "forward"), None)


def _takes_default(function: Function, name: str) -> bool:
    """``function`` has a parameter ``name`` with a default (the value it runs with)."""
    args = function.args
    positional = args.args[len(args.args) - len(args.defaults):] if args.defaults else []
    keyword = [a for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)
               if d is not None]
    return any(a.arg == name for a in (*positional, *keyword))


EXCEPTION_CHECKS: tuple[Check, ...] = ()
SILENT_CHECKS: tuple[Check, ...] = (check_argument_not_passed_on,)

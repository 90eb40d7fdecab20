"""A parameter that a function of the program takes and never reads, though the program
passes it a value, while the function calls a function of the program that takes a parameter
of that name and is not given it (a ``training`` flag given to a model's forward that calls
its masking block without it): the inner call always runs with its own default, so the value
the caller chose changes nothing. The change passes it on; its re-run shows what it changes.

Only that shape is said: a parameter that is merely unused (a callback's argument, a batch
index) may well be meant, and nothing would show otherwise."""

from __future__ import annotations

import ast

from tutor.diagnosis.calls import Calls, Function
from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import Fix, replace_node
from tutor.diagnosis.flow import default_value, text
from tutor.diagnosis.verify import prints_else
from tutor.i18n import T


def check_argument_not_passed_on(ctx: Ctx) -> list[Candidate]:
    if ctx.error is not None:
        return []
    graph = ctx.flow.call_graph
    out: list[Candidate] = []
    for function in graph.functions:
        read = {n.id for n in ast.walk(function) if isinstance(n, ast.Name)
                and isinstance(n.ctx, ast.Load)}
        names = [a.arg for a in (*function.args.args, *function.args.kwonlyargs)
                 if a.arg not in ("self", "cls") and a.arg not in read]
        owner = graph.parents.get(function)
        for name in names:
            if not graph.arguments_for(function, name):
                continue  # nobody gives it a value: an unused parameter may well be meant
            for call in sorted((n for n in ast.walk(function) if isinstance(n, ast.Call)),
                               key=lambda c: (c.lineno, c.col_offset)):
                inner = _callee(graph, owner, call)
                if inner is None or inner is function or not _takes_default(
                        graph, inner, name) or any(k.arg in (name, None) for k in call.keywords):
                    continue
                new = ast.unparse(ast.Call(call.func, call.args, [
                    *call.keywords, ast.keyword(name, ast.Name(name, ast.Load()))]))
                edit = replace_node(ctx.code, call, new)
                if edit is None:
                    continue
                callee = text(call.func)
                where = f"{owner.name}.{function.name}" if isinstance(
                    owner, ast.ClassDef) else function.name
                fill: dict[str, object] = {"line": call.lineno, "name": name,
                                           "function": where, "callee": callee}
                out.append(Candidate("argument-not-passed-on", call.lineno, 0.8, [
                    ("argument-unread", fill)],
                    [Fix((edit,), prints_else, T(
                        f"pass `{name}` on to `{callee}` on line {call.lineno}: `{new}`",
                        f"第 {call.lineno} 行把 `{name}` 传给 `{callee}`：`{new}`"))], fill))
                break
    return out


def _callee(graph: Calls, owner: ast.AST | None, call: ast.Call) -> Function | None:
    """The function of the program a call runs: a module-level function by its name, a
    method of the same class (``self.helper(...)``), or the forward of the program's class
    whose object the attribute holds (``self.masking(...)``)."""
    func = call.func
    if isinstance(func, ast.Name):
        found = [f for f in graph.functions if f.name == func.id
                 and isinstance(graph.parents.get(f), ast.Module)]
        return found[0] if len(found) == 1 else None
    if not (isinstance(owner, ast.ClassDef) and isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name) and func.value.id == "self"):
        return None
    for node in owner.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == func.attr:
            return node
    held = [cls for cls, names in graph.instances.items() if text(func) in names]
    classes = [c for c in ast.walk(graph.tree) if isinstance(c, ast.ClassDef) and c.name in held]
    if len(classes) != 1:
        return None
    return next((f for f in classes[0].body
                 if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and f.name == "forward"), None)


def _takes_default(graph: Calls, function: Function, name: str) -> bool:
    """``function`` has a parameter ``name`` with a default (the value it runs with)."""
    found = graph.parameter(function, name)
    return found is not None and default_value(function, found[1]) is not None


EXCEPTION_CHECKS: tuple[Check, ...] = ()
SILENT_CHECKS: tuple[Check, ...] = (check_argument_not_passed_on,)

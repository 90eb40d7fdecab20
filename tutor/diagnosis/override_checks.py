"""A learner's method that takes the place of torch's own: ``def train(self, data)`` in an
``nn.Module`` replaces ``Module.train(mode)``, and torch still calls it the way it means it
(``Module.eval()`` calls ``self.train(False)``), so the learner's method runs with torch's
arguments and fails inside. The run says which torch function called it and which method it
replaced (:class:`~tutor.sandbox.models.FrameInfo`); the change tried renames the learner's
method and the learner's calls that bind to it, not the ones that mean torch's.
"""

from __future__ import annotations

import ast

from tutor import syntax_tree
from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import Edit, Fix, replace_in_line, replace_nodes
from tutor.diagnosis.flow import text
from tutor.diagnosis.verify import runs_clean
from tutor.i18n import T

NEW_NAMES = {"train": "fit", "eval": "evaluate", "parameters": "own_parameters"}
"""A name a reader knows for what such a method usually does; others get ``my_`` before."""


def check_method_takes_torchs_place(ctx: Ctx) -> list[Candidate]:
    if ctx.error is None:
        return []
    frame = next((f for f in ctx.error.traceback if f.overrides and f.called_by), None)
    if frame is None or frame.overrides is None or frame.called_by is None:
        return []
    name = frame.function
    method = ctx.flow.function_at(frame.line)
    owner = ctx.flow.parents.get(method) if method is not None else None
    if not isinstance(method, ast.FunctionDef) or method.name != name or \
            not isinstance(owner, ast.ClassDef):
        return []
    theirs = _parameters(frame.overridden_signature)
    mine = method.args
    if theirs is not None and _shape(theirs) == _shape(mine):
        return []  # torch's own parameters: a deliberate override, whatever failed in it
    new = _new_name(ctx.flow.tree, name)
    edits = [e for e in (replace_in_line(ctx.code, method.lineno, rf"\bdef {name}\b",
                                         f"def {new}"),) if e is not None]
    edits += _renamed_calls(ctx.code, ctx.flow.tree, name, new, mine, theirs)
    fill = {"line": method.lineno, "name": name, "module": owner.name,
            "op": frame.called_by, "target": frame.overrides, "fail_line": ctx.fail_line or
            frame.line, "detail": f"({ast.unparse(mine)})", "new": new,
            "given": frame.overridden_signature or "(...)"}
    fixes = []
    if edits and edits[0].line == method.lineno:
        fixes.append(Fix(tuple(edits), runs_clean, T(
            f"rename your method `{name}` to `{new}` (line {method.lineno}) and call it by "
            "that name",
            f"把你的方法 `{name}` 改名为 `{new}`（第 {method.lineno} 行），并用这个名字调用它")))
    return [Candidate("method-takes-torchs-place", method.lineno, 0.85, [
        ("method-replaces-torchs", fill), ("torch-calls-replaced", fill)], fixes, fill)]


def _parameters(signature: str | None) -> ast.arguments | None:
    """torch's method's parameters from ``inspect.signature``'s text; None where that text
    is not Python (a default shown as ``<object ...>``)."""
    if not signature:
        return None
    params = signature.split(" -> ")[0]
    try:
        parsed = syntax_tree.parse(f"def _{params}: pass")
    except SyntaxError:
        return None
    function = parsed.body[0]
    return function.args if isinstance(function, ast.FunctionDef) else None


def _shape(params: ast.arguments) -> tuple[object, ...]:
    """The parameters' names and how many have defaults (not their annotations)."""
    return ([a.arg for a in (*params.posonlyargs, *params.args)][1:], len(params.defaults),
            [a.arg for a in params.kwonlyargs], params.vararg is None, params.kwarg is None)


def _new_name(tree: ast.AST, name: str) -> str:
    taken = {n.id if isinstance(n, ast.Name) else n.attr for n in ast.walk(tree)
             if isinstance(n, (ast.Name, ast.Attribute))}
    for candidate in (NEW_NAMES.get(name, f"my_{name}"), f"my_{name}", f"{name}_model"):
        if candidate not in taken and candidate != name:
            return candidate
    return f"{name}_{len(taken)}"


def binds(call: ast.Call, params: ast.arguments) -> bool:
    """Whether ``call`` (a method call: its receiver is ``self``) fits ``params``."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(
            k.arg is None for k in call.keywords):
        return True  # ``*args``/``**kw``: anything may fit
    positional = [a.arg for a in (*params.posonlyargs, *params.args)][1:]  # less self
    if len(call.args) > len(positional) and params.vararg is None:
        return False
    named = {k.arg for k in call.keywords}
    known = set(positional) | {a.arg for a in params.kwonlyargs}
    if params.kwarg is None and not named <= known:
        return False
    required = positional[: len(positional) - len(params.defaults)]
    given = set(positional[: len(call.args)]) | named
    kw_required = {a.arg for a, d in zip(params.kwonlyargs, params.kw_defaults, strict=True)
                   if d is None}
    return set(required) <= given and kw_required <= given


def means_torchs(call: ast.Call, params: ast.arguments) -> bool:
    """Whether ``call`` fits torch's method as torch means it: every value it passes is a
    constant of the type torch's parameter is annotated with (``model.train()``,
    ``self.train(False)``); a learner's variable goes to the learner's method."""
    if not binds(call, params):
        return False
    positional = [a for a in (*params.posonlyargs, *params.args)][1:]
    pairs = list(zip(positional, call.args, strict=False))
    by_name = {a.arg: a for a in (*positional, *params.kwonlyargs)}
    pairs += [(by_name[k.arg], k.value) for k in call.keywords if k.arg in by_name]
    for param, value in pairs:
        if not isinstance(value, ast.Constant):
            return False
        wanted = ast.unparse(param.annotation) if param.annotation is not None else None
        if wanted is not None and type(value.value).__name__ not in wanted:
            return False
    return True


def _renamed_calls(code: str, tree: ast.AST, name: str, new: str, mine: ast.arguments,
                   theirs: ast.arguments | None) -> list[Edit]:
    """The learner's calls ``x.name(...)`` that fit the learner's method and not torch's,
    renamed (one edit a line); ``super().name(...)`` always means torch's."""
    by_line: dict[int, list[tuple[ast.AST, str]]] = {}
    for call in ast.walk(tree):
        if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute) or \
                call.func.attr != name:
            continue
        receiver = call.func.value
        if isinstance(receiver, ast.Call) and text(receiver.func) == "super":
            continue
        if not binds(call, mine) or (theirs is not None and means_torchs(call, theirs)):
            continue
        by_line.setdefault(call.lineno, []).append((call.func, f"{text(receiver)}.{new}"))
    edits = [replace_nodes(code, changes) for changes in by_line.values()]
    return [e for e in edits if e is not None]


EXCEPTION_CHECKS: tuple[Check, ...] = (check_method_takes_torchs_place,)
SILENT_CHECKS: tuple[Check, ...] = ()

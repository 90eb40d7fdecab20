"""Rules checked on the learner's syntax tree, never by running the code.

Each rule returns a :class:`RuleOutcome`: whether it holds and, when it does not, the line
that breaks it (or ``None`` when the rule fails for lack of something, e.g. no ``backward``).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from tutor.course.models import AstRule
from tutor.python_names import dotted, nodes

GRAD_WRITE_METHODS_ALLOWED = frozenset({"zero_", "requires_grad_"})
"""In-place methods that may be called on ``.grad``: zeroing between steps is the lesson."""


@dataclass(frozen=True)
class RuleOutcome:
    holds: bool
    line: int | None = None
    detail: str = ""


def dotted_name(node: ast.AST) -> str | None:
    """``torch.autograd.grad`` for that attribute chain; ``?.backward`` for a method on an
    expression such as ``(a + b).backward``; ``None`` for anything else."""
    name = dotted(node)
    if name is not None or not isinstance(node, ast.Attribute):
        return name
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join(["?", *reversed(parts)])


def import_aliases(tree: ast.AST) -> dict[str, str]:
    """Local name -> the module path it stands for (``t`` -> ``torch``, ``mm`` -> ``torch.mm``)."""
    aliases: dict[str, str] = {}
    for node in nodes(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    aliases[alias.asname] = alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return aliases


def resolve(name: str, aliases: dict[str, str]) -> str:
    head, _, rest = name.partition(".")
    if head in aliases:
        return aliases[head] + ("." + rest if rest else "")
    return name


@dataclass(frozen=True)
class _Call:
    name: str  # resolved dotted name, e.g. "torch.mm", "x.detach", "?.backward"
    line: int
    node: ast.Call


def _calls(tree: ast.AST) -> list[_Call]:
    aliases = import_aliases(tree)
    found: list[_Call] = []
    for node in nodes(tree):
        if isinstance(node, ast.Call):
            name = dotted_name(node.func)
            if name is not None:
                found.append(_Call(resolve(name, aliases), node.lineno, node))
    return sorted(found, key=lambda call: call.line)


def count_calls(tree: ast.AST, wanted: str) -> int:
    """How many calls of ``wanted`` the code makes (as :func:`call_matches` tells them)."""
    return sum(1 for call in _calls(tree) if call_matches(call.name, wanted))


def call_matches(call_name: str, wanted: str) -> bool:
    """Whether a call named ``call_name`` is a call of ``wanted``.

    ``detach`` matches any ``.detach()``; ``torch.mm`` matches ``torch.mm(...)``, an aliased
    ``t.mm(...)`` and the method form ``x.mm(...)``, which is the same operation.
    """
    if call_name == wanted:
        return True
    last = wanted.rsplit(".", 1)[-1]
    if "." not in wanted:
        return call_name.rsplit(".", 1)[-1] == wanted
    if wanted.startswith("torch.") and call_name.rsplit(".", 1)[-1] == last:
        receiver = call_name.rsplit(".", 1)[0]
        return not receiver.startswith("torch")
    return False


def _is_grad_attr(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "grad"


def _touches_grad(node: ast.AST) -> bool:
    """``x.grad``, ``x.grad.data``, ``x.grad[0]``, ``x.grad.data[0]``..."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        if _is_grad_attr(node):
            return True
        node = node.value
    return False


def _is_none(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _grad_owner(node: ast.AST) -> str | None:
    """``x`` for ``x.grad``, ``x.grad.data``, ``x.grad[0]``: whose gradient it is."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        if _is_grad_attr(node):
            return ast.unparse(node.value)
        node = node.value
    return None


def grad_assignments(tree: ast.AST) -> list[tuple[int, str]]:
    """Every place the code writes a ``.grad`` by hand, as (line, what)."""
    return sorted({(line, what) for line, what, _ in _grad_writes(tree)})


def hand_written_grads(tree: ast.AST) -> set[str] | None:
    """Whose ``.grad`` the code writes by hand (``{"x"}`` for ``x.grad = ...``); None when a
    write cannot be pinned to one tensor (``setattr(t, name, ...)``), which may be any."""
    owners = {owner for _, _, owner in _grad_writes(tree)}
    return None if None in owners else owners  # type: ignore[return-value]


def _grad_writes(tree: ast.AST) -> list[tuple[int, str, str | None]]:
    writes: list[tuple[int, str, str | None]] = []
    for node in nodes(tree):
        if not isinstance(node, ast.stmt | ast.expr):
            continue
        targets: list[ast.AST] = []
        value: ast.AST | None = None
        if isinstance(node, ast.Assign):
            targets, value = list(node.targets), node.value
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets, value = [node.target], node.value
        for target in targets:
            for sub in ast.walk(target):
                if _touches_grad(sub) and not (_is_grad_attr(sub) and _is_none(value)):
                    writes.append((node.lineno, "assigns .grad", _grad_owner(sub)))
                    break
        if isinstance(node, ast.Call):
            func = node.func
            name = dotted_name(func) or ""
            if name.rsplit(".", 1)[-1] == "setattr" and len(node.args) >= 2:
                attr = node.args[1]
                names_grad = not (isinstance(attr, ast.Constant) and attr.value != "grad")
                clears = len(node.args) >= 3 and _is_none(node.args[2])
                if names_grad and not clears:
                    owner = ast.unparse(node.args[0]) if isinstance(attr, ast.Constant) else None
                    writes.append((node.lineno, "setattr(..., 'grad', ...)", owner))
            if (
                isinstance(func, ast.Attribute)
                and _touches_grad(func.value)
                and func.attr.endswith("_")
                and not func.attr.startswith("_")
                and func.attr not in GRAD_WRITE_METHODS_ALLOWED
            ):
                writes.append((node.lineno, f".grad.{func.attr}(...)", _grad_owner(func.value)))
            # torch.nn.init.*_(x.grad) and torch.Tensor.copy_(x.grad, ...) write through args
            if (
                name.endswith("_")
                and not name.endswith("__")
                and node.args
                and _touches_grad(node.args[0])
                and not (isinstance(func, ast.Attribute) and _touches_grad(func.value))
                and name.rsplit(".", 1)[-1] not in GRAD_WRITE_METHODS_ALLOWED
            ):
                writes.append((node.lineno, f"{name}(x.grad, ...)", _grad_owner(node.args[0])))
    return writes


def _backward_calls(calls: list[_Call]) -> list[_Call]:
    return [
        call
        for call in calls
        if call.name.endswith(".backward") or call_matches(call.name, "torch.autograd.grad")
    ]


def _with_no_grad(tree: ast.AST, aliases: dict[str, str]) -> bool:
    for node in nodes(tree):
        exprs: list[ast.AST] = []
        if isinstance(node, (ast.With, ast.AsyncWith)):
            exprs = [item.context_expr for item in node.items]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            exprs = list(node.decorator_list)
        for expr in exprs:
            target = expr.func if isinstance(expr, ast.Call) else expr
            name = dotted_name(target)
            if name is None:
                continue
            last = resolve(name, aliases).rsplit(".", 1)[-1]
            if last in {"no_grad", "inference_mode"}:
                return True
            if last == "set_grad_enabled" and isinstance(expr, ast.Call) and expr.args:
                arg = expr.args[0]
                if isinstance(arg, ast.Constant) and arg.value is False:
                    return True
    return False


def check_rule(tree: ast.AST, rule: AstRule, name: str | None = None) -> RuleOutcome:
    """Evaluate one :data:`AstRule` on a parsed module."""
    calls = _calls(tree)
    if rule == "calls_backward":
        found = _backward_calls(calls)
        return RuleOutcome(bool(found), found[0].line if found else None)
    if rule == "uses_no_grad":
        return RuleOutcome(_with_no_grad(tree, import_aliases(tree)))
    if rule == "no_grad_assignment":
        writes = grad_assignments(tree)
        return RuleOutcome(not writes, *(writes[0] if writes else (None, "")))
    if rule == "no_data_attribute":
        lines = sorted(
            node.lineno
            for node in nodes(tree)
            if isinstance(node, ast.Attribute) and node.attr == "data"
        )
        return RuleOutcome(not lines, lines[0] if lines else None, ".data")
    if rule == "grad_from_backward":
        writes = grad_assignments(tree)
        if writes:
            return RuleOutcome(False, writes[0][0], writes[0][1])
        found = _backward_calls(calls)
        return RuleOutcome(bool(found), None, "" if found else "no backward")
    if rule in ("calls", "does_not_call"):
        if not name:
            raise ValueError(f"AST rule {rule!r} needs a name")
        hits = [call for call in calls if call_matches(call.name, name)]
        if rule == "calls":
            return RuleOutcome(bool(hits), hits[0].line if hits else None)
        return RuleOutcome(not hits, hits[0].line if hits else None)
    raise ValueError(f"unknown AST rule {rule!r}")

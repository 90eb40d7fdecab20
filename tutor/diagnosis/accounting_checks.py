"""Silent bugs of parameter accounting, read off what the instrumented re-run saw of where the
trainable tensors live (:mod:`tutor.sandbox.param_accounting`), not off the program's shape:

- layers or tensors that require grad, kept on a module in a plain list, tuple or dict: the
  loss reaches them and backward() gives them gradients, but ``parameters()`` (and so the
  optimizer) does not look inside plain containers, so they never change;
- a layer or ``nn.Parameter`` built inside ``forward``: new random values at every call, never
  the ones an optimizer holds;
- a freezing flag that freezes nothing: ``requires_grad`` set as an attribute of a Module
  (the flag lives on each parameter) or a misspelt flag on the parameters.

The source only says where to change it; each fix is tried, and counts only when the fixed run
shows the tensors registered, built once, or frozen.
"""

from __future__ import annotations

import ast
import re

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import Edit, Expect, Fix, replace_node
from tutor.diagnosis.flow import Flow, call_name, text
from tutor.diagnosis.symptoms import built_once, flags_work, registered_and_learns
from tutor.i18n import T
from tutor.sandbox.models import BuiltInForwardEvidence, FlagEvidence, ParamEvidence

CONTAINERS = {"list": ("ModuleList", "ParameterList"), "tuple": ("ModuleList", "ParameterList"),
              "dict": ("ModuleDict", "ParameterDict")}


def _nn(code: str) -> str:
    return "nn" if re.search(r"^\s*(import torch\.nn as nn|from torch import nn)\b", code,
                             re.MULTILINE) else "torch.nn"


def _names(params: list[ParamEvidence] | list[str]) -> str:
    named = [p if isinstance(p, str) else p.name for p in params]
    return ", ".join(f"`{n}`" for n in list(dict.fromkeys(named))[:3])


# -- held in a plain container ---------------------------------------------------------------
def check_held_in_container(ctx: Ctx) -> list[Candidate]:
    """Tensors the loss reaches, held by a module in a plain list/tuple/dict, not in the
    optimizer while an optimizer steps others: wrap the container in its nn.* counterpart."""
    ev = ctx.evidence
    if ctx.error is not None or not ev.steps:
        return []
    groups: dict[str, list[ParamEvidence]] = {}
    for param in ev.params:
        if param.held_in and param.reached and not param.in_optimizer and param.requires_grad:
            groups.setdefault(param.held_in, []).append(param)
    wrapped: list[tuple[ast.Assign, str, str, list[Edit], dict[str, object]]] = []
    for held_in, params in groups.items():
        attr = held_in.split(".")[-1]
        container = params[0].container or "list"
        layers = any(re.search(r"\]\.[A-Za-z_]", p.name) for p in params)
        made = [s for s in ctx.flow.assignments.get(f"self.{attr}", [])
                if isinstance(s, ast.Assign)]
        if not made:
            continue
        stmt = made[0]
        kinds = CONTAINERS.get(container, CONTAINERS["list"])
        kind = f"{_nn(ctx.code)}.{kinds[0] if layers else kinds[1]}"
        edits = _wrap_container(ctx, stmt, attr, kind, layers)
        if edits:
            wrapped.append((stmt, kind, container, edits, {
                "line": stmt.lineno, "name": f"self.{attr}", "detail": container,
                "count": len(params)}))
    # every such container is wrapped in the one change: the trial asks that all the
    # tensors the loss reaches learn, and two plain lists (encoders, decoders) are common
    every = tuple(e for *_, edits, _ in wrapped for e in edits)
    lines = sorted(stmt.lineno for stmt, *_ in wrapped)
    out: list[Candidate] = []
    for stmt, kind, container, _edits, facts in wrapped:
        where = (f"line {stmt.lineno}" if len(lines) == 1 else
                 "lines " + ", ".join(str(n) for n in lines))
        where_zh = "、".join(str(n) for n in lines)
        out.append(Candidate("params-in-plain-container", stmt.lineno, 0.9, [
            ("held-in-container", facts),
            ("reached-not-stepped", facts)],
            [Fix(every, registered_and_learns, T(
                f"keep them in `{kind}` on {where}: a plain {container} hides them from "
                "`parameters()`",
                f"第 {where_zh} 行用 `{kind}` 保存它们：普通的 {container} 会让 "
                "`parameters()` 看不到它们"))], facts))
    return out


def _wrap_container(ctx: Ctx, stmt: ast.Assign, attr: str, kind: str, layers: bool
                    ) -> list[Edit]:
    """``self.x = [...]`` -> ``self.x = nn.ModuleList([...])``, and a plain list appended to
    it (``self.x.append([layer, act])``) wrapped the same way, so nested lists register too."""
    value = stmt.value
    new = f"{kind}()" if (isinstance(value, (ast.List, ast.Tuple)) and not value.elts) or (
        isinstance(value, ast.Dict) and not value.keys) else f"{kind}({text(value)})"
    first = replace_node(ctx.code, value, new)
    edits = [first] if first is not None else _wrap_lines(ctx.code, value, kind)
    if not edits:
        return []
    for call in ctx.flow.calls_named("append"):
        owner = call.func.value if isinstance(call.func, ast.Attribute) else None
        if owner is None or text(owner) != f"self.{attr}" or not call.args:
            continue
        item = call.args[0]
        if isinstance(item, (ast.List, ast.Tuple)) and layers:
            inner = kind.replace("Dict", "List")
            edit = _replace_span(ctx.code, item, f"{inner}([{', '.join(map(text, item.elts))}])")
            if edit is None:
                return []
            edits.extend(edit)
    return edits


def _wrap_lines(code: str, node: ast.expr, kind: str) -> list[Edit]:
    """A value written over several lines (a dict of layers, one to a line) wrapped in
    ``kind(...)`` where it opens and closes, its lines between kept as they are."""
    end = node.end_lineno or node.lineno
    if end == node.lineno or node.end_col_offset is None:
        return []
    lines = code.splitlines()
    first = lines[node.lineno - 1].encode("utf-8")
    last = lines[end - 1].encode("utf-8")
    opened = first[:node.col_offset] + f"{kind}(".encode() + first[node.col_offset:]
    closed = last[:node.end_col_offset] + b")" + last[node.end_col_offset:]
    return [Edit("replace", node.lineno, opened.decode("utf-8", "replace")),
            Edit("replace", end, closed.decode("utf-8", "replace"))]


def _replace_span(code: str, node: ast.expr, new: str) -> list[Edit] | None:
    """Edits that put ``new`` (one line) in place of ``node``, which may span lines."""
    if node.lineno == node.end_lineno:
        edit = replace_node(code, node, new)
        return [edit] if edit is not None else None
    lines = code.splitlines()
    end = node.end_lineno or node.lineno
    first, last = lines[node.lineno - 1], lines[end - 1]
    head = first[:node.col_offset] if node.col_offset is not None else first
    tail = last[node.end_col_offset:] if node.end_col_offset is not None else ""
    return [Edit("replace", node.lineno, head + new + tail),
            *(Edit("delete", n) for n in range(node.lineno + 1, end + 1))]


# -- built inside forward -----------------------------------------------------------------------
def check_built_in_forward(ctx: Ctx) -> list[Candidate]:
    """Parameters registered while a forward ran, made anew at each call (or never held by
    the optimizer that trains the rest): build them once, in ``__init__``."""
    ev = ctx.evidence
    if ctx.error is not None:
        return []
    built = [b for b in ev.accounting.built_in_forward
             if b.count >= 2 * _per_call(b) or (ev.steps and not b.in_optimizer)]
    if not built:
        return []
    flow = ctx.flow
    moves = _moves(ctx, built)
    if moves is None:
        return []
    edits, lines = moves
    first = built[0]
    where = lines[0]
    facts: dict[str, object] = {"line": where, "module": first.module, "detail": first.made,
                                "count": sum(b.count for b in built)}
    made = ", ".join(f"`{text(flow_call)}`" for flow_call in _constructors(flow, built)[:1])
    steps: list[tuple[str, dict[str, object]]] = [
        ("built-in-forward", {**facts, "op": made or first.made, "count": first.count})]
    if ev.steps and not any(b.in_optimizer for b in built):
        steps.append(("not-stepped", {"module": first.module}))
    shown = ", ".join(map(str, lines))
    them, plural = ("them", "s") if len(lines) > 1 else ("it", "")
    return [Candidate("layers-built-in-forward", where, 0.9, steps, [Fix(
        tuple(edits), built_once, T(
            f"build {them} once in `__init__` and only call {them} in `forward` "
            f"(line{plural} {shown})",
            f"只在 `__init__` 中创建一次，`forward` 里只调用"
            f"（第 {shown.replace(', ', '、')} 行）"))],
        facts)]


def _per_call(built: BuiltInForwardEvidence) -> int:
    """Parameters one construction registers: a layer's weight and bias, one Parameter."""
    return 1 if built.made == "Parameter" else 2


def _constructors(flow: Flow, built: list[BuiltInForwardEvidence]) -> list[ast.Call]:
    found = []
    for entry in built:
        stmt = flow.statement_at(entry.line)
        call = _made_call(stmt, entry) if stmt is not None else None
        if call is not None:
            found.append(call)
    return found


def _made_call(stmt: ast.stmt, entry: BuiltInForwardEvidence) -> ast.Call | None:
    """The constructor on the statement: ``nn.Linear(...)`` or ``nn.Parameter(...)``."""
    want = "Parameter" if entry.made == "Parameter" else entry.made
    for node in ast.walk(stmt):
        if isinstance(node, ast.Call) and call_name(node) == want:
            return node
    return None


def _moves(ctx: Ctx, built: list[BuiltInForwardEvidence]
           ) -> tuple[list[Edit], list[int]] | None:
    """The edits that build each layer once in the class's ``__init__`` (as ``self.<name>``)
    and use it in ``forward``; None where one of them cannot be moved."""
    flow = ctx.flow
    edits: list[Edit] = []
    lines: list[int] = []
    init: ast.FunctionDef | None = None
    taken = set(flow.names_in(flow.tree)) | {t.split(".", 1)[1] for t in flow.assignments
                                             if t.startswith("self.")}
    added: list[str] = []
    for entry in sorted(built, key=lambda b: b.line):
        stmt = flow.statement_at(entry.line)
        call = _made_call(stmt, entry) if stmt is not None else None
        forward = flow.scope_of(stmt) if stmt is not None else None
        if call is None or stmt is None or not isinstance(forward, ast.FunctionDef):
            return None
        owner = flow.parents.get(forward)
        here = _init_of(owner)
        if here is None or (init is not None and here is not init):
            return None
        init = here
        made = _made_text(ctx, call, forward, init)
        if made is None:
            return None
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and stmt.value is call:
            target = text(stmt.targets[0])
            if target.startswith("self."):  # self.w = nn.Parameter(...) in forward
                added.append(f"{target} = {made}")
                edits.append(Edit("delete", stmt.lineno))
            else:  # head = nn.Linear(...); head(x)
                attr = _fresh(target, taken)
                added.append(f"self.{attr} = {made}")
                edits.append(Edit("delete", stmt.lineno))
                edits.extend(_renamed_uses(ctx, forward, target, f"self.{attr}", stmt.lineno))
        else:  # nn.Linear(D_in, H)(x) inline
            attr = _fresh(f"{call_name(call).lower()}{len(added) + 1}", taken)
            added.append(f"self.{attr} = {made}")
            edit = replace_node(ctx.code, call, f"self.{attr}")
            if edit is None:
                return None
            edits.append(edit)
        lines.append(entry.line)
    if init is None or not added:
        return None
    anchor = _after_super(init)
    edits.extend(Edit("insert_after", anchor, line) for line in reversed(added))
    return edits, lines


def _init_of(owner: ast.AST | None) -> ast.FunctionDef | None:
    if not isinstance(owner, ast.ClassDef):
        return None
    return next((f for f in owner.body if isinstance(f, ast.FunctionDef)
                 and f.name == "__init__"), None)


def _after_super(init: ast.FunctionDef) -> int:
    """The last line of ``__init__``'s last statement: new attributes go after what it sets."""
    last = init.body[-1]
    return last.end_lineno or last.lineno


def _fresh(name: str, taken: set[str]) -> str:
    base = name.split(".")[-1]
    if base not in taken:
        taken.add(base)
        return base
    k = 2
    while f"{base}{k}" in taken:
        k += 1
    taken.add(f"{base}{k}")
    return f"{base}{k}"


def _made_text(ctx: Ctx, call: ast.Call, forward: ast.FunctionDef, init: ast.FunctionDef
               ) -> str | None:
    """The constructor as ``__init__`` can write it: its names must be visible there (the
    module's globals, ``__init__``'s parameters, ``self``); a Linear or Conv whose input size
    comes from the forward pass becomes its Lazy counterpart, which reads it at the first
    call."""
    flow = ctx.flow
    top = {n for n, made in flow.assignments.items()
           if any(flow.scope_of(s) is flow.tree for s in made)}
    top |= {d.name for d in flow.tree.body if isinstance(d, (ast.FunctionDef, ast.ClassDef))}
    visible = {a.arg for a in init.args.args} | top | flow.imported | _BUILTINS
    local = {a.arg for a in forward.args.args if a.arg != "self"} | {
        t for s in ast.walk(forward) if isinstance(s, ast.Assign)
        for target in s.targets for t in _simple(target)}

    def readable(node: ast.AST) -> bool:
        for name in ast.walk(node):
            if isinstance(name, ast.Name) and name.id != "self" and (
                    name.id in local or name.id not in visible):
                return False
        return True

    if all(readable(a) for a in [*call.args, *(k.value for k in call.keywords)]):
        return text(call)
    lazy = LAZY.get(call_name(call))
    if lazy is None or not call.args or not all(readable(a) for a in [
            *call.args[1:], *(k.value for k in call.keywords)]):
        return None
    func = text(call.func)
    rest = ", ".join([*map(text, call.args[1:]), *(f"{k.arg}={text(k.value)}"
                                                   for k in call.keywords)])
    return f"{func[: -len(call_name(call))]}{lazy}({rest})"


LAZY = {"Linear": "LazyLinear", "Conv1d": "LazyConv1d", "Conv2d": "LazyConv2d",
        "Conv3d": "LazyConv3d", "BatchNorm1d": "LazyBatchNorm1d",
        "BatchNorm2d": "LazyBatchNorm2d"}
"""Layers whose first argument is the input size, and the class that infers it."""
_BUILTINS = frozenset({"int", "float", "len", "range", "max", "min", "abs", "True", "False",
                       "None", "round"})


def _simple(target: ast.AST) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for e in target.elts for n in _simple(e)]
    return []


def _renamed_uses(ctx: Ctx, forward: ast.FunctionDef, old: str, new: str, after: int
                  ) -> list[Edit]:
    """Each later read of ``old`` in ``forward`` becomes ``new`` (one edit per line)."""
    by_line: dict[int, list[ast.Name]] = {}
    for node in ast.walk(forward):
        if isinstance(node, ast.Name) and node.id == old and isinstance(node.ctx, ast.Load) \
                and node.lineno > after:
            by_line.setdefault(node.lineno, []).append(node)
    edits = []
    lines = ctx.code.splitlines()
    for number, nodes in by_line.items():
        line = lines[number - 1]
        for node in sorted(nodes, key=lambda n: -(n.col_offset or 0)):
            line = line[:node.col_offset] + new + line[node.end_col_offset:]
        edits.append(Edit("replace", number, line))
    return edits


# -- freezing flags that freeze nothing ---------------------------------------------------------
def check_flag_ignored(ctx: Ctx) -> list[Candidate]:
    """``module.requires_grad = False`` (an attribute of the Module, which has no such
    flag) or ``param.require_grad = False`` (a misspelt one): the parameters still require
    grad and the optimizer still moves them."""
    ev = ctx.evidence
    if ctx.error is not None:
        return []
    out: list[Candidate] = []
    for flag in ev.accounting.module_flags:
        if flag.value not in ("False", "0"):
            continue
        held = [p for p in ev.params if p.name in flag.params]
        if held and not any(p.requires_grad for p in held):
            continue  # frozen some other way too
        for stmt in _flag_statements(ctx.flow, flag):
            out.extend(_flag_candidate(ctx, flag, stmt))
    return out


def _flag_statements(flow: Flow, flag: FlagEvidence) -> list[ast.Assign]:
    """The assignments that set the flag: ``<x>.requires_grad = ...`` on a module, or
    ``<p>.<typo> = ...``; those whose receiver names the flagged module come first."""
    found = [s for s in flow.statements if isinstance(s, ast.Assign) and len(s.targets) == 1
             and isinstance(s.targets[0], ast.Attribute) and s.targets[0].attr == flag.attr]
    last = flag.target.split(".")[-1]
    found.sort(key=lambda s: 0 if text(s.targets[0]).split(".")[-2:-1] == [last] else 1)
    return found[:3]


def _flag_candidate(ctx: Ctx, flag: FlagEvidence, stmt: ast.Assign) -> list[Candidate]:
    target = stmt.targets[0]
    assert isinstance(target, ast.Attribute)
    owner, value = text(target.value), text(stmt.value)
    if flag.on == "module":
        new = f"{owner}.requires_grad_({value})"
        cid, step = "module-requires-grad-attr", "flag-on-module"
        describe = T(f"set the flag on its parameters: `{new}` on line {stmt.lineno}",
                     f"第 {stmt.lineno} 行在它的参数上设置标志：`{new}`")
    else:
        new = f"{owner}.requires_grad = {value}"
        cid, step = "requires-grad-typo", "flag-misspelt"
        describe = T(f"spell the flag `requires_grad`: `{new}` on line {stmt.lineno}",
                     f"第 {stmt.lineno} 行把标志写成 `requires_grad`：`{new}`")
    lines = ctx.code.splitlines()
    indent = lines[stmt.lineno - 1][: len(lines[stmt.lineno - 1]) - len(
        lines[stmt.lineno - 1].lstrip())]
    if stmt.lineno != stmt.end_lineno:
        return []
    edit = Edit("replace", stmt.lineno, indent + new)
    facts = {"line": stmt.lineno, "name": owner, "target": flag.target, "detail": flag.attr,
             "module": flag.kind, "params": _names(flag.params) or None}
    expect: Expect = flags_work(flag.params)
    return [Candidate(cid, stmt.lineno, 0.9, [(step, facts)],
                      [Fix((edit,), expect, describe)], facts)]


EXCEPTION_CHECKS: tuple[Check, ...] = ()
SILENT_CHECKS: tuple[Check, ...] = (check_held_in_container, check_built_in_forward,
                                    check_flag_ignored)

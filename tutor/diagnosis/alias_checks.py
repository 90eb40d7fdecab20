"""Silent bugs of aliasing: two roles the program keeps apart (an online and a target network,
a model and its copy) that are one object, or a copy made from the destination itself. Read
off the instrumented re-run (:mod:`tutor.sandbox.param_accounting`: one module object bound to
several of the learner's names, ``copy_`` whose source shares the destination's storage), not
off names that look like a DQN's; the source says which statement made the alias, and whether
the program treats the names as separate networks (it copies one into the other, or uses one's
output as a fixed target).
"""

from __future__ import annotations

import ast
import re

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import Edit, Fix, replace_node
from tutor.diagnosis.flow import Flow, call_name, receiver, text
from tutor.diagnosis.pitfalls import state_dict_kept, state_dict_value
from tutor.diagnosis.source import Source
from tutor.diagnosis.symptoms import copies_from_trained, networks_apart
from tutor.diagnosis.verify import prints_else
from tutor.i18n import T
from tutor.sandbox.models import AliasEvidence

RETURNS_SELF = frozenset({"to", "cuda", "cpu", "train", "eval", "float", "double", "half",
                          "requires_grad_", "share_memory"})
"""Module methods that return the module itself: ``b = a.to(device)`` is ``a``."""


def _base(node: ast.expr) -> str:
    """``model`` for ``model.to(device).train()``: what a chain of self-returning calls is."""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            node.func.attr in RETURNS_SELF:
        node = node.func.value
    return text(node)


def _loads(flow: Flow) -> list[tuple[ast.Call, str, str]]:
    """``(call, destination, source)`` for each ``dst.load_state_dict(src.state_dict())``."""
    found = []
    for call in flow.calls_named("load_state_dict"):
        arg = call.args[0] if call.args else None
        if isinstance(arg, ast.Call) and call_name(arg) == "state_dict" and receiver(call):
            found.append((call, receiver(call) or "", receiver(arg) or ""))
    return found


# -- a copy from the destination itself ---------------------------------------------------------
def check_self_copy(ctx: Ctx) -> list[Candidate]:
    """``target.load_state_dict(target.state_dict())``: the copy runs, and changes nothing.
    Copy from the network of the same class that the optimizer trains."""
    ev = ctx.evidence
    if ctx.error is not None:
        return []
    out: list[Candidate] = []
    for copied in ev.accounting.self_copies:
        for call, dst, src in _loads(ctx.flow):
            if call.lineno != copied.line or dst != src:
                continue
            for other in _siblings(ctx, dst)[:2]:
                arg = call.args[0]
                assert isinstance(arg, ast.Call) and isinstance(arg.func, ast.Attribute)
                edit = replace_node(ctx.code, arg.func.value, other)
                if edit is None:
                    continue
                facts = {"line": call.lineno, "name": dst, "target": other,
                         "count": copied.count}
                out.append(Candidate("target-copied-from-itself", call.lineno, 0.9, [
                    ("copied-onto-itself", facts)],
                    [Fix((edit,), copies_from_trained, T(
                        f"copy from the trained network: `{other}.state_dict()` on line "
                        f"{call.lineno}",
                        f"第 {call.lineno} 行从训练的网络复制：`{other}.state_dict()`"))],
                    facts))
    return out


def check_update_from_itself(ctx: Ctx) -> list[Candidate]:
    """A soft (Polyak, EMA) update that mixes the destination with itself:
    ``for t, o in zip(target.parameters(), online.parameters()): t.copy_(a * t + b * t)``.
    The re-run saw the copied value computed from the destination alone; the loop's other
    name is the network it should follow."""
    if ctx.error is not None:
        return []
    out: list[Candidate] = []
    for copied in ctx.evidence.accounting.self_copies:
        stmt = ctx.flow.statement_at(copied.line)
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        loop = ctx.flow.parents.get(stmt) if stmt is not None else None
        if not isinstance(call, ast.Call) or call_name(call) != "copy_" or not call.args or \
                not isinstance(loop, ast.For) or not isinstance(loop.target, ast.Tuple):
            continue
        assert isinstance(call.func, ast.Attribute)
        dest = _strip_data(call.func.value)
        names = [e.id for e in loop.target.elts if isinstance(e, ast.Name)]
        if not isinstance(dest, ast.Name) or dest.id not in names or len(names) != 2:
            continue
        partner = next(n for n in names if n != dest.id)
        reads = [n for n in ast.walk(call.args[0]) if isinstance(n, ast.Name)]
        mine = [n for n in reads if n.id == dest.id]
        if any(n.id == partner for n in reads) or len(mine) < 2:
            continue
        last = max(mine, key=lambda n: (n.lineno, n.col_offset))
        edit = replace_node(ctx.code, last, partner)
        if edit is None:
            continue
        facts = {"line": copied.line, "name": dest.id, "target": partner, "count": copied.count}
        out.append(Candidate("target-mixed-with-itself", copied.line, 0.85, [
            ("mixed-with-itself", facts)], [Fix((edit,), copies_from_trained, T(
                f"mix in `{partner}`, the network to follow: the last `{dest.id}` on line "
                f"{copied.line} becomes `{partner}`",
                f"混入要跟随的网络 `{partner}`：第 {copied.line} 行最后一个 `{dest.id}` 改成 "
                f"`{partner}`"))], facts))
    return out


def _strip_data(node: ast.expr) -> ast.expr:
    return node.value if isinstance(node, ast.Attribute) and node.attr == "data" else node


def _siblings(ctx: Ctx, name: str) -> list[str]:
    """Names assigned a module of the same class as ``name`` (``self.eval_net = Net()`` for
    ``self.target_net = Net()``), those an optimizer is given first."""
    flow = ctx.flow
    kinds = {call_name(v) for s in flow.assignments.get(name, [])
             if isinstance(v := flow.value_of(s), ast.Call)}
    if not kinds:
        return []
    found = [other for other, made in flow.assignments.items() if other != name and any(
        isinstance(v := flow.value_of(s), ast.Call) and call_name(v) in kinds for s in made)]
    given = {text(n) for _, _, opt in flow.optimizers() for n in ast.walk(opt)
             if isinstance(n, ast.Attribute) and n.attr == "parameters"}
    trained = {g.rsplit(".parameters", 1)[0] for g in given}
    return sorted(found, key=lambda n: (n not in trained, n))


# -- one network under two names ----------------------------------------------------------------
def check_aliased_networks(ctx: Ctx) -> list[Candidate]:
    """Two of the learner's names for one module object, which the program treats as two
    networks (it copies one into the other, or uses one's output as a fixed target) while an
    optimizer trains it: the 'target' moves at every step."""
    ev = ctx.evidence
    if ctx.error is not None:
        return []
    out: list[Candidate] = []
    for alias in ev.accounting.aliases:
        if not alias.trained or len(alias.names) < 2:
            continue
        roles = _apart(ctx, alias)
        if roles is None:
            continue
        made = _alias_made(ctx.flow, alias.names)
        if made is None:
            continue
        stmt, name, other = made
        fixes = _separate(ctx, stmt, name, other, copied=roles[0] == "copied-between-names")
        if not fixes:
            continue
        copies = ev.accounting.self_copies
        facts = {"line": stmt.lineno, "name": name, "target": other, "module": alias.kind,
                 "detail": roles[1]}
        steps: list[tuple[str, dict[str, object]]] = [("one-network-two-names", facts)]
        if roles[0] is not None:
            steps.append((roles[0], {**facts, "fail_line": roles[2]}))
        if copies:
            steps.append(("copied-onto-itself", {"line": copies[0].line, "name": name,
                                                  "count": copies[0].count}))
        out.append(Candidate("target-net-aliased", stmt.lineno, 0.9, steps, fixes, facts))
    return out


def _apart(ctx: Ctx, alias: AliasEvidence) -> tuple[str | None, str, int] | None:
    """How the program keeps the names apart, as (a chain step, the name used as the
    fixed one, a line): a state-dict copy from one into the other, or one's output taken as
    a constant (detached, or computed under no_grad). None: nothing says they are meant to
    be two networks (shared layers are legitimate)."""
    names = set(alias.names)
    for call, dst, src in _loads(ctx.flow):
        if dst in names and src in names and dst != src:
            return "copied-between-names", dst, call.lineno
    flow = ctx.flow
    fixed: list[tuple[str, int]] = []
    trained: set[str] = set()
    for call in flow.calls:
        func = text(call.func)
        if func not in names:
            continue
        stmt = flow.statement_of(call)
        detached = any(isinstance(a, ast.Call) and call_name(a) == "detach"
                       for a in flow.ancestors(call))
        if detached or (stmt is not None and flow.in_no_grad(stmt) is not None):
            fixed.append((func, call.lineno))
        else:
            trained.add(func)
    for func, line in fixed:
        if trained - {func}:
            return "used-as-target", func, line
    return None


def _alias_made(flow: Flow, names: list[str]) -> tuple[ast.Assign, str, str] | None:
    """The assignment that bound a second name to the first one's module: ``b = a`` (or
    ``a.to(device)``), or ``b = m.to(device)`` after ``a = m.to(device)``; the later one."""
    found: list[tuple[ast.Assign, str, str]] = []
    for name in names:
        for stmt in flow.assignments.get(name, []):
            if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
                continue
            base = _base(stmt.value)
            for other in names:
                if other == name:
                    continue
                if base == other:
                    found.append((stmt, name, other))
                    continue
                for earlier in flow.assignments.get(other, []):
                    if isinstance(earlier, ast.Assign) and earlier.lineno < stmt.lineno and \
                            _base(earlier.value) == base and isinstance(
                                _root(earlier.value), ast.Name):
                        found.append((stmt, name, other))
    return max(found, key=lambda f: f[0].lineno) if found else None


def _constructor(flow: Flow, name: str, before: int) -> str | None:
    """The class call ``name`` was built with at the module's level (``DQN(4, 2)``), which
    the alias's line can repeat."""
    made = flow.assigned_before(name, before)
    if not isinstance(made, ast.Assign) or flow.scope_of(made) is not flow.tree:
        return None
    value = _root(made.value)
    if not isinstance(value, ast.Call) or not call_name(value)[:1].isupper():
        return None
    return text(value)


def _root(node: ast.expr) -> ast.expr:
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            node.func.attr in RETURNS_SELF:
        node = node.func.value
    return node


def _separate(ctx: Ctx, stmt: ast.Assign, name: str, other: str, copied: bool) -> list[Fix]:
    """Make ``name`` a network of its own: drop ``name = other`` when the line before already
    copied the weights into it; else build it as a deep copy, or, where the program copies
    the weights into it anyway, as a second instance of the same class."""
    fixes: list[Fix] = []
    if text(stmt.value) == other and any(
            call.lineno < stmt.lineno and dst == name and src == other
            and ctx.flow.scope_of(call) is ctx.flow.scope_of(stmt)
            for call, dst, src in _loads(ctx.flow)):
        fixes.append(Fix((Edit("delete", stmt.lineno),), networks_apart, T(
            f"delete line {stmt.lineno}: `load_state_dict` already copied the weights, and "
            f"this line makes `{name}` the same network as `{other}`",
            f"删除第 {stmt.lineno} 行：`load_state_dict` 已经复制了权重，而这一行让 "
            f"`{name}` 和 `{other}` 成了同一个网络")))
        return fixes
    if stmt.lineno != stmt.end_lineno:
        return fixes
    built = _constructor(ctx.flow, other, stmt.lineno) if copied else None
    if built is not None:  # `target = online` after `online = Net(4, 2)`: a second Net(4, 2)
        edit = replace_node(ctx.code, stmt.value, built)
        if edit is not None:
            fixes.append(Fix((edit,), networks_apart, T(
                f"build `{name}` as a network of its own on line {stmt.lineno}: "
                f"`{name} = {built}`",
                f"第 {stmt.lineno} 行把 `{name}` 建成独立的网络：`{name} = {built}`")))
    new = f"copy.deepcopy({text(stmt.value)})"
    edit = replace_node(ctx.code, stmt.value, new)
    if edit is None:
        return fixes
    edits = [edit]
    if not re.search(r"^import copy\b|^from copy import", ctx.code, re.MULTILINE):
        edits.append(Edit("insert_before", 1, "import copy"))
    fixes.append(Fix(tuple(edits), networks_apart, T(
        f"make `{name}` a copy of its own on line {stmt.lineno}: `{name} = {new}`",
        f"第 {stmt.lineno} 行让 `{name}` 成为独立的副本：`{name} = {new}`")))
    return fixes


EXCEPTION_CHECKS: tuple[Check, ...] = ()
def check_state_dict_snapshot(ctx: Ctx) -> list[Candidate]:
    """``best = model.state_dict()`` kept while training goes on (the pitfall of the same
    name, read from the source), tried: every ``state_dict()`` that name is given is wrapped
    in ``copy.deepcopy``, and the fix is kept when the program then prints something else
    (the weights it loads, saves or returns are the ones it meant to keep)."""
    if ctx.error is not None:
        return []
    out = []
    # the pitfall rule reads the flow's own parse: the program is not parsed again
    for hit in state_dict_kept(Source(tree=ctx.flow.tree, parents=ctx.flow.parents)):
        name = hit.variable
        if not name:
            continue
        sites = [st for st in ctx.flow.assignments.get(name, [])
                 if isinstance(st, ast.Assign) and state_dict_value(st.value)]
        edits = [replace_node(ctx.code, st.value, f"copy.deepcopy({text(st.value)})")
                 for st in sites]
        if not sites or any(e is None for e in edits):
            continue
        lines = ", ".join(str(st.lineno) for st in sites)
        fix = Fix((Edit("insert_before", 1, "import copy"), *(e for e in edits if e)),
                  prints_else, T(
                      f"keep a snapshot: wrap the `state_dict()` given to `{name}` in "
                      f"`copy.deepcopy(...)` (line {lines}) and `import copy`",
                      f"保存一份快照：把赋给 `{name}` 的 `state_dict()` 包进 "
                      f"`copy.deepcopy(...)`（第 {lines} 行），并 `import copy`"))
        out.append(Candidate("state-dict-kept-by-reference", hit.line, 0.8, [
            ("state-dict-live", {"line": hit.line, "name": f"`{name}`"})], [fix],
            {"name": name, "line": hit.line}))
    return out


SILENT_CHECKS: tuple[Check, ...] = (check_aliased_networks, check_self_copy,
                                    check_update_from_itself, check_state_dict_snapshot)

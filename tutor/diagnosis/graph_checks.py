"""Checks of exceptions about the graph: a second backward through a freed graph, a loss with
no graph, a saved tensor changed in place, a leaf changed in place, a non-scalar backward,
NumPy from a tensor that requires grad, a ``.grad`` that is None, integer tensors asked to
require grad."""

from __future__ import annotations

import ast
import re

from tutor.diagnosis.candidate import Candidate, Check, Ctx, at_failing_line
from tutor.diagnosis.cuts import MAKERS as CONVERTERS
from tutor.diagnosis.cuts import (
    cut_fixes,
    grad_switched_off,
    keeping_values,
    no_grad_decorator,
    round_trip,
    scoped_no_grad,
    surrogate_direction,
)
from tutor.diagnosis.fixes import (
    Edit,
    Expect,
    Fix,
    indent_of,
    node_fix,
    postfix,
    replace_in_line,
    replace_node,
    replace_nodes,
)
from tutor.diagnosis.flow import Flow, call_name, module_label, receiver, target_names, text
from tutor.diagnosis.verify import backward_runs, params_learn, runs_clean
from tutor.i18n import T, Text
from tutor.sandbox.models import OpEvidence

THE_LOSS = T("the loss", "损失")
"""What a step says of the tensor backward() was called on when the program gave it no
name (a name is shown as code, `loss`)."""


def _stmt_call(flow: Flow, line: int, *names: str) -> ast.Call | None:
    stmt = flow.statement_at(line)
    if stmt is None:
        return None
    return next((n for n in ast.walk(stmt) if isinstance(n, ast.Call) and call_name(n) in names),
                None)



def _wrap_no_grad(code: str, line: int) -> tuple[Edit, ...]:
    lines = code.splitlines()
    original = lines[line - 1]
    return (Edit("replace", line, indent_of(original) + "with torch.no_grad():\n"
                 + indent_of(original) + "    " + original.strip()),)



def check_backward_twice(ctx: Ctx) -> list[Candidate]:
    """A backward through a graph an earlier backward() freed. ``retain_graph=True`` makes
    any such error go away, so it is proposed only where nothing says the graph should not
    be reused: not when the failing backward() ran before on an earlier pass (the graph of
    one pass reaches into the last one: a carried state, detached or reset each pass), not
    when the first backward() sends gradients into parameters its optimizer does not hold
    (a GAN's discriminator step on the generator's output: detach it there)."""
    if "backward through the graph a second time" not in ctx.message:
        return []
    flow, fail = ctx.flow, ctx.fail_line or 0
    out: list[Candidate] = []
    call = _stmt_call(flow, fail, "backward", "grad")
    target = receiver(call) if call is not None and receiver(call) else None
    stmt = flow.statement_at(fail)
    loops = flow.loops_of(stmt) if stmt is not None else []
    backs = [b.line for b in ctx.evidence.backwards]
    first_back = backs[0] if backs else fail
    fills: dict[str, object] = {"fail_line": fail, "name": f"`{target}`" if target else THE_LOSS}
    # the same backward() ran on an earlier pass of a loop (the failing line's, or one that
    # calls the function it is in): this pass's graph reaches into that one's
    passes = _pass_loop(ctx)
    again = passes is not None and any(b.line == fail and b.raised is None
                                       for b in ctx.evidence.backwards)
    # 1. a state carried from one pass to the next (h = f(x, h)) keeps the old graph
    for loop in loops[:1]:
        for sub in ast.walk(loop):
            if isinstance(sub, (ast.Assign, ast.AugAssign)) and sub.lineno <= fail:
                out.extend(_carried(ctx, sub, loop, target, fills))
    if again and passes is not None:
        out.extend(_carried_attributes(ctx, passes, fills))
    # 2a. a loop over losses of one forward pass, each backpropagated in turn: its passes
    # are the losses, not a training loop's (nothing carries a graph from one to the next)
    turn = _losses_in_turn(ctx, loops[0], target, fills) if loops and target else None
    if turn is not None:
        out.append(turn)
        again = False
    # 2. a value the loop differentiates was built before the loop
    if loops and target:
        loop = loops[0]
        for line in sorted(flow.slice_lines(target, fail)):
            inner = flow.statement_at(line)
            names = [n for t in getattr(inner, "targets", []) for n in target_names(t)]
            in_loop = any(s.lineno > loop.lineno and loop in flow.ancestors(s)
                          for n in names for s in flow.assignments.get(n, []))
            if inner is not None and flow.runs_before(line, loop) \
                    and _depends_on_grad(flow, inner) and not in_loop:
                built = {"built_self": f"`{target}`"} if target in names else \
                    {"built_part": ", ".join(f"`{n}`" for n in names)} if names else {}
                fill = {"line": line, "name": target, "built_line": line, **built}
                out.append(Candidate("backward-twice-loop", line, 0.85, [
                    ("backward-raised", fills),
                    ("built-outside-loop", {"line": line, "name": target}),
                ], [*_into_loop(flow, inner, loop), *_detached_where_made(ctx, inner)], fill))
    # 0. the very tensor an earlier backward() went through, backpropagated again (a helper
    # that calls backward() itself and returns the loss): once is what is meant, and
    # retain_graph would run it twice and double every gradient
    twice = None if again else _same_tensor_again(ctx, fail)
    if twice is not None:
        out.append(twice)
    # 5. two losses share a forward pass and each has its own backward()
    shared = _shared_forward(ctx, target, fills) if twice is None else []
    out.extend(shared)
    # 6. a value passed in from another network's computation, still holding its graph
    # (shown only where detaching it works: it refutes nothing by itself)
    if twice is None and not again:
        out.extend(_crossing_value(ctx, "backward-twice", fills, _freed_before(ctx)))
    # 3. two backward passes through one graph in straight-line code: one backward() of the
    # sum when nothing happens between them, else (last resort: it keeps the whole graph
    # alive, and is wrong where the graph should not be reused) retain_graph
    if ((len(backs) >= 2 and not loops) or (len(set(backs)) >= 2 and backs[-1] != backs[0])) \
            and not again:
        prev = [b for b in backs if b != fail]
        prev_line = prev[-1] if prev else first_back
        summed = _sum_losses(ctx, prev_line, target)
        if summed is not None:
            out.append(Candidate("backward-twice", prev_line, 0.6, [
                ("backward-raised", fills), ("first-backward", {"line": prev_line}),
                ("nothing-between", {"line": prev_line, "fail_line": fail})],
                [summed], {"line": prev_line}))
        edit = replace_in_line(ctx.code, prev_line, r"\.backward\(\)",
                               ".backward(retain_graph=True)")
        if not shared and twice is None:
            out.append(Candidate("backward-twice", prev_line, 0.45, [
                ("backward-raised", fills), ("first-backward", {"line": prev_line}),
            ], [Fix((edit,), runs_clean,
                    T(f"keep the graph for the second pass: `backward(retain_graph=True)` "
                      f"on line {prev_line}",
                      f"为第二次反向传播保留计算图：第 {prev_line} 行使用 "
                      "`backward(retain_graph=True)`"))] if edit else [], {"line": prev_line}))
    # 4. the second pass reuses a forward output computed before the first backward
    if call is not None and not again:
        for name in flow.names_in(call):
            stmt2 = flow.assigned_before(name, fail, call)
            if stmt2 is not None and stmt2.lineno < first_back < fail:
                value = flow.value_of(stmt2)
                if value is not None:
                    expr = text(value)
                    edit = replace_in_line(ctx.code, fail, rf"\b{re.escape(name)}\b", f"({expr})")
                    if edit is not None:
                        out.append(Candidate("backward-twice", fail, 0.55, [
                            ("backward-raised", fills),
                            ("reused-output", {"line": stmt2.lineno, "name": name}),
                        ], [Fix((edit,), runs_clean,
                                T(f"recompute `{name}` for the second pass: `{expr}`",
                                  f"为第二次反向传播重新计算 `{name}`：`{expr}`"))],
                            {"line": stmt2.lineno, "name": name}))
    if again:
        # the graph is carried across passes: the message's own advice (retain_graph) is
        # refuted, and the entry that says so words every candidate; when the evidence does
        # not show what carries it, that is said too
        ctx.refuted.add("backward-twice")
        for cand in out:
            if cand.id == "backward-twice":
                cand.id = "backward-twice-carried"
                cand.fill.setdefault("fail_line", fail)
        if not out:
            out.append(Candidate("backward-twice-carried", fail, 0.7, [
                ("backward-raised", fills), ("backward-again", {"fail_line": fail})],
                [], {"fail_line": fail, "name": f"`{target}`" if target else THE_LOSS}))
    elif shared:
        ctx.refuted.add("backward-twice")  # its advice is retain_graph
    return out


def _same_tensor_again(ctx: Ctx, fail: int) -> Candidate | None:
    """The failing backward() goes through the same tensor an earlier backward() in another
    function went through (the recorder's history of both starts at the same record: a
    helper that backpropagates and returns its loss): the failing call is deleted, where it
    is a statement of its own."""
    raised = next((b for b in ctx.evidence.backwards if b.line == fail and b.raised), None)
    if raised is None or not raised.chain or raised.chain[0].index is None:
        return None
    first = next((b for b in ctx.evidence.backwards if b.line != fail and b.raised is None
                  and b.chain and b.chain[0].index == raised.chain[0].index), None)
    stmt = ctx.flow.statement_at(fail)
    if first is None or not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
                             and call_name(stmt.value) == "backward"
                             and stmt.lineno == stmt.end_lineno):
        return None
    # both plain backward() of a scalar: two calls with gradient vectors (the rows of a
    # Jacobian, the course's z.backward([[1, 0]]) then [[0, 1]]) mean two passes; and in two
    # functions, one of which hands the tensor on after its own backward(): two calls side by
    # side (the accumulation lesson's y.backward() twice) say the second pass is meant
    calls = [_stmt_call(ctx.flow, line, "backward") for line in (first.line, fail)]
    if any(c is None or c.args or any(k.arg in ("gradient", "inputs") for k in c.keywords)
           for c in calls) or ctx.flow.function_at(first.line) is ctx.flow.function_at(fail):
        return None
    name = raised.name or first.name or "loss"
    fill = {"line": first.line, "fail_line": fail, "name": f"`{name}`"}
    fix = Fix((Edit("delete", fail),), runs_clean, T(
        f"backpropagate `{name}` once: delete the backward() on line {fail}, since line "
        f"{first.line} already ran it on the same `{name}`",
        f"只对 `{name}` 反向传播一次：删除第 {fail} 行的 backward()，因为第 {first.line} 行"
        f"已经对同一个 `{name}` 执行过"))
    return Candidate("backward-twice", first.line, 0.8, [
        ("backward-raised", {"fail_line": fail, "name": f"`{name}`"}),
        ("same-tensor-backward", fill)], [fix], fill)


def _into_loop(flow: Flow, stmt: ast.stmt, loop: ast.stmt) -> list[Fix]:
    """The statement made once before the loop, made at the start of each pass instead: moved
    there, or, when the loop runs in a function the value was passed to, written again there
    with the names the function knows the values by."""
    line, body = stmt.lineno, _first_body_line(loop)
    function = flow.function_at(loop.lineno)
    if flow.function_at(line) is function:
        return [Fix((Edit("move_before", line, to=body),), runs_clean,
                    T(f"move line {line} into the loop so each pass builds its own graph",
                      f"把第 {line} 行移到循环内，让每次循环都构建自己的计算图"))]
    seen = flow.as_seen_in(stmt, function) if function is not None else None
    if seen is None:
        return []
    return [Fix((Edit("insert_before", body, seen),), runs_clean,
                T(f"build it again at the start of each pass (before line {body}): `{seen}`, "
                  f"as line {line} does once",
                  f"在每次循环开始时（第 {body} 行之前）重新构建它：`{seen}`"
                  f"（第 {line} 行只在循环之前构建了一次）"))]


def _detached_where_made(ctx: Ctx, stmt: ast.stmt) -> list[Fix]:
    """The value made once before the loop, detached where it is made: a target or data
    built from tensors that require grad needs no graph. Kept only if what the program
    trains still learns (:func:`tutor.diagnosis.verify.hides_bug`)."""
    value = ctx.flow.value_of(stmt)
    names = [n for t in getattr(stmt, "targets", []) for n in target_names(t)]
    if not isinstance(stmt, ast.Assign) or value is None or len(names) != 1:
        return []
    edit = replace_node(ctx.code, value, postfix(value, ".detach()"))
    return [Fix((edit,), runs_clean, T(
        f"detach `{names[0]}` where line {stmt.lineno} makes it, so the graph of each pass "
        "does not reach back into it",
        f"在第 {stmt.lineno} 行创建 `{names[0]}` 的地方把它 detach，"
        "让每次循环的计算图不再回溯到它"))] if edit is not None else []


def _pass_loop(ctx: Ctx) -> ast.stmt | None:
    """The innermost loop that holds the failing line, or the line of an outer frame of the
    traceback (a training step called once a pass)."""
    for line in [ctx.fail_line or 0, *reversed(ctx.trace_lines())]:
        stmt = ctx.flow.statement_at(line)
        loops = ctx.flow.loops_of(stmt) if stmt is not None else []
        if loops:
            return loops[0]
    return None


def _carried_attributes(ctx: Ctx, loop: ast.stmt, fills: dict[str, object]
                        ) -> list[Candidate]:
    """State kept on an object across calls (``self.mem = beta * self.mem + x``,
    ``out, self.hidden = self.lstm(x, self.hidden)``): each batch's graph holds the last
    batch's. Reset it (to what ``__init__`` starts it from) or detach it at the start of
    each pass of the training loop, on the modules the loop calls."""
    flow = ctx.flow
    out = []
    for stmt in flow.statements:
        if not isinstance(stmt, ast.Assign):
            continue
        owner = next((a for a in flow.ancestors(stmt) if isinstance(a, ast.ClassDef)), None)
        names = [n for t in stmt.targets for n in target_names(t) if n.startswith("self.")]
        carried = [n for n in names if n in flow.names_in(stmt.value)]
        if owner is None or not carried:
            continue
        attr = carried[0].removeprefix("self.")
        paths = _instances(ctx, loop, owner.name)
        if not paths:
            continue
        start = _init_value(owner, attr)
        resets = []
        if start is not None:
            resets.append([f"{p}.{attr} = " + re.sub(r"\bself\b", p, text(start))
                           for p in paths])
        resets.append([f"{p}.{attr} = None if {p}.{attr} is None else {p}.{attr}.detach() if "
                       f"torch.is_tensor({p}.{attr}) else tuple(s.detach() for s in "
                       f"{p}.{attr})" for p in paths])
        body = _first_body_line(loop)
        indent = indent_of(flow.line(body))
        fixes = []
        for lines in resets:
            snippet = ("\n" + indent).join(lines)
            what = "reset" if lines is resets[0] and start is not None else "detach"
            shown = "; ".join(lines) if len(lines) <= 3 and what == "reset" else lines[0]
            fixes.append(Fix((Edit("insert_before", body, snippet),), runs_clean, T(
                f"{what} the state at the start of each pass (before line {body}): `{shown}`",
                f"在每次循环开始时（第 {body} 行之前）"
                f"{'重置' if what == 'reset' else '截断'}这个状态：`{shown}`")))
        out.append(Candidate("backward-twice", stmt.lineno, 0.9, [
            ("backward-raised", fills),
            ("carried-attribute", {"line": stmt.lineno, "name": carried[0],
                                   "fail_line": body})],
            fixes, {"name": carried[0], "line": stmt.lineno}))
    return out


def _instances(ctx: Ctx, loop: ast.stmt, cls: str) -> list[str]:
    """How the loop reaches the objects of class ``cls``: a module it calls (the re-run names
    it) of that class, or one such module's attribute built as ``cls(...)``."""
    end = getattr(loop, "end_lineno", None) or loop.lineno
    paths: list[str] = []
    for call in ctx.evidence.modules:
        if not loop.lineno <= call.line <= end or not call.module.isidentifier():
            continue
        if call.kind == cls:
            paths.append(call.module)
            continue
        paths.extend(_listed_in(ctx.flow, call.module, cls))
        holder = next((c for c in ast.walk(ctx.flow.tree) if isinstance(c, ast.ClassDef)
                       and c.name == call.kind), None)
        for node in ast.walk(holder) if holder is not None else ():
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and \
                    call_name(node.value) == cls:
                paths.extend(f"{call.module}.{n.removeprefix('self.')}" for t in node.targets
                             for n in target_names(t) if n.startswith("self."))
    return list(dict.fromkeys(paths))


def _listed_in(flow: Flow, module: str, cls: str) -> list[str]:
    """``net[1]``, ``net[3]`` for ``net = nn.Sequential(nn.Linear(...), Cls(), ...,
    Cls())``: the layers of class ``cls`` a container built in the source holds."""
    made = [flow.value_of(s) for s in flow.assignments.get(module, [])]
    if len(made) != 1 or not isinstance(made[0], ast.Call) or \
            call_name(made[0]) not in ("Sequential", "ModuleList"):
        return []
    layers = made[0].args[0].elts if call_name(made[0]) == "ModuleList" and made[0].args and \
        isinstance(made[0].args[0], (ast.List, ast.Tuple)) else made[0].args
    return [f"{module}[{i}]" for i, layer in enumerate(layers)
            if isinstance(layer, ast.Call) and call_name(layer) == cls]


def _init_value(owner: ast.ClassDef, attr: str) -> ast.expr | None:
    """What ``__init__`` sets ``self.attr`` to, when it reads nothing but ``self`` and
    constants (it can be written again from outside)."""
    init = next((f for f in owner.body if isinstance(f, ast.FunctionDef)
                 and f.name == "__init__"), None)
    for node in ast.walk(init) if init is not None else ():
        if isinstance(node, ast.Assign) and any(text(t) == f"self.{attr}" for t in node.targets):
            names = {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)}
            return node.value if names <= {"self", "torch", "None"} else None
    return None


def _carried(ctx: Ctx, stmt: ast.Assign | ast.AugAssign, loop: ast.stmt, target: str | None,
             fills: dict[str, object]) -> list[Candidate]:
    """``h = f(x, h)`` in a loop: each pass's graph holds the previous pass's, freed by its
    backward(). A carried tensor state is detached at each pass; a running sum of losses
    that is itself differentiated is a sum for logging (``.item()``) and each pass's own
    loss gets the backward()."""
    flow = ctx.flow
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
    assigned = [n for t in targets for n in target_names(t)]
    used = flow.names_in(stmt.value) | (set(assigned) if isinstance(stmt, ast.AugAssign)
                                        else set())
    carried = [n for n in assigned if n in used and not _reset_each_pass(flow, n, stmt, loop)]
    if not carried:
        return []
    line, name = stmt.lineno, ", ".join(carried)
    steps: list[tuple[str, dict[str, object]]] = [
        ("backward-raised", fills), ("carried-state", {"line": line, "name": name})]
    fixes = []
    increment = _increment(stmt, carried[0])
    if target in carried and increment is not None and isinstance(increment, ast.Name):
        total = _merge_edits(ctx.code, [
            replace_node(ctx.code, increment, f"{increment.id}.item()"),
            replace_in_line(ctx.code, ctx.fail_line or 0, rf"\b{re.escape(target)}\.backward\(",
                            f"{increment.id}.backward(")])
        if total is not None:
            fixes.append(Fix(total, runs_clean, T(
                f"call backward() on each pass's own `{increment.id}` and add up "
                f"`{increment.id}.item()` in `{target}` (line {line}) for logging",
                f"对每次循环自己的 `{increment.id}` 调用 backward()，并在第 {line} 行把 "
                f"`{increment.id}.item()` 累加到 `{target}` 里用于记录")))
    starts = [flow.value_of(s) for n in carried for s in flow.assignments.get(n, [])
              if s.lineno < loop.lineno]
    numbers = any(isinstance(v, ast.Constant) and v.value is not None for v in starts)
    maybe_none = any(isinstance(v, ast.Constant) and v.value is None for v in starts)
    detaches = [] if numbers else [  # a number to start with has no .detach()
        *([] if maybe_none else ["; ".join(f"{n} = {n}.detach()" for n in carried)]),
        # an LSTM's (h, c) is a tuple, and the state may start as None
        "; ".join(f"{n} = None if {n} is None else {n}.detach() if torch.is_tensor({n}) "
                  f"else tuple(s.detach() for s in {n})" for n in carried)]
    for detach in detaches:
        fixes.append(Fix((Edit("insert_before", line, detach),), runs_clean,
                         T(f"detach the carried state before line {line}: `{detach}`",
                           f"在第 {line} 行之前截断传递的状态：`{detach}`")))
    return [Candidate("backward-twice", line, 0.9, steps, fixes, {"name": name, "line": line})]


def _reset_each_pass(flow: Flow, name: str, stmt: ast.stmt, loop: ast.stmt) -> bool:
    """``name`` is bound afresh on every pass of ``loop`` before ``stmt`` (``total = 0.0``
    at the top of the pass): what ``stmt`` carries then stays within one pass, and nothing
    of it reaches the next one."""
    for other in flow.assignments.get(name, []):
        value = flow.value_of(other)
        if other is stmt or other.lineno >= stmt.lineno or value is None or \
                isinstance(other, ast.AugAssign) or name in flow.names_in(value):
            continue
        between = flow.ancestors(other)
        if loop not in between:
            continue
        # it runs on every pass: nothing but the loop itself (or a with block) around it
        if all(not isinstance(a, (ast.If, ast.For, ast.While, ast.Try, ast.AsyncFor))
               for a in between[:between.index(loop)]):
            return True
    return False


def _increment(stmt: ast.Assign | ast.AugAssign, name: str) -> ast.expr | None:
    """``loss`` in ``total = total + loss`` or ``total += loss``."""
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.op, ast.Add):
        return stmt.value
    value = stmt.value
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
        if isinstance(value.left, ast.Name) and value.left.id == name:
            return value.right
        if isinstance(value.right, ast.Name) and value.right.id == name:
            return value.left
    return None


def _merge_edits(code: str, edits: list[Edit | None]) -> tuple[Edit, ...] | None:
    """Edits on different lines made together, or None if one of them does not fit."""
    if any(e is None for e in edits) or len({e.line for e in edits if e}) != len(edits):
        return None
    return tuple(e for e in edits if e is not None)


def _sum_losses(ctx: Ctx, first: int, target: str | None) -> Fix | None:
    """``a.backward()`` then ``b.backward()`` in one block with nothing between them that
    reads or changes gradients: one ``(a + b).backward()`` gives the same gradients."""
    flow, fail = ctx.flow, ctx.fail_line or 0
    one, two = flow.statement_at(first), flow.statement_at(fail)
    call = _stmt_call(flow, first, "backward")
    head = receiver(call) if call is not None else None
    parent = flow.parents.get(one) if one is not None else None
    if one is None or two is None or not head or not target or call is None or call.args or \
            call.keywords or parent is not flow.parents.get(two):
        return None
    body = getattr(parent, "body", [])
    if one not in body or two not in body:
        return None
    between = body[body.index(one) + 1:body.index(two)]
    if any(".grad" in text(s) or "step" in text(s) for s in between):
        return None
    total = f"({head} + {target}).backward("
    edits = (Edit("delete", first), replace_in_line(ctx.code, fail,
                                                    rf"\b{re.escape(target)}\.backward\(",
                                                    total))
    if edits[1] is None:
        return None
    return Fix((edits[0], edits[1]), runs_clean, T(
        f"call backward() once, on the sum: `({head} + {target}).backward()` on line {fail}, "
        f"instead of line {first}",
        f"只调用一次 backward()，对两者之和：第 {fail} 行写成 `({head} + {target}).backward()`，"
        f"去掉第 {first} 行"))


def _shared_forward(ctx: Ctx, target: str | None, fills: dict[str, object]
                    ) -> list[Candidate]:
    """Two losses built from one forward pass (a GAN's ``fake = gen(z)``), each with its own
    backward(): an earlier backward frees the shared part. When the optimizer stepped after
    that earlier backward() holds none of the parameters it reached through the shared value,
    that loss should not reach them: detach it there (retain_graph would only hide this)."""
    flow, fail = ctx.flow, ctx.fail_line or 0
    backs = ctx.evidence.backwards
    failing = next((i for i, b in enumerate(backs) if b.raised), len(backs))
    if not target:
        return []
    ours = flow.slice_lines(target, fail)
    out = []
    for index in reversed(range(failing)):  # the most recent backward() first
        first = backs[index]
        first_call = _stmt_call(flow, first.line, "backward")
        first_target = receiver(first_call) if first_call is not None else None
        if first.line == fail or first.line > fail or not first_target:
            continue
        theirs = flow.slice_lines(first_target, first.line)
        stepped = next((s for s in ctx.evidence.steps if s.after_backward > index), None)
        idle = set(first.reached) - set(stepped.params) if stepped is not None else set()
        if not idle:
            continue  # without that evidence, detaching would silently drop gradients
        for line in sorted(ours & theirs):
            stmt = flow.statement_at(line)
            if line >= first.line or stmt is None or not _depends_on_grad(flow, stmt):
                continue
            for name in [n for t in getattr(stmt, "targets", []) for n in target_names(t)]:
                use = next((n for n in sorted(theirs) if line < n < first.line and re.search(
                    rf"\b{re.escape(name)}\b", flow.line(n))), None)
                if use is None:
                    continue
                edit = replace_in_line(ctx.code, use, rf"\b{re.escape(name)}\b(?!\.detach)",
                                       f"{name}.detach()")
                out.append(Candidate("backward-twice", use, 0.85, [
                    ("backward-raised", fills),
                    ("shared-forward", {"line": line, "name": name, "fail_line": first.line}),
                    ("first-pass-idle", {"line": use, "params": _listing(sorted(idle))})],
                    [Fix((edit,), runs_clean, T(
                        f"give the first loss a detached `{name}` on line {use}: "
                        f"`{name}.detach()`",
                        f"第 {use} 行让第一个损失使用截断的 `{name}`：`{name}.detach()`"))]
                    if edit else [], {"line": use, "name": name}))
        if out:
            break
    return out


def _losses_in_turn(ctx: Ctx, loop: ast.stmt, target: str, fills: dict[str, object]
                    ) -> Candidate | None:
    """``for loss_item in losses: loss_item.backward()``: the losses of one forward pass
    (a model's tuple of losses), each backpropagated through the part they share; the
    first backward() frees it. One backward() of their sum gives the same gradients."""
    if not isinstance(loop, ast.For) or not isinstance(loop.target, ast.Name) or \
            loop.target.id != target or len(loop.body) != 1:
        return None
    body = loop.body[0]
    if not (isinstance(body, ast.Expr) and isinstance(body.value, ast.Call)
            and call_name(body.value) == "backward" and not body.value.args
            and not body.value.keywords and receiver(body.value) == target):
        return None
    losses = text(loop.iter)
    indent = indent_of(ctx.flow.line(loop.lineno))
    summed = f"sum({losses}).backward()"
    fix = Fix((Edit("replace", loop.lineno, f"{indent}{summed}"), Edit("delete", body.lineno)),
              runs_clean, T(
        f"backpropagate the losses of `{losses}` once, summed: `{summed}` in place of the "
        f"loop on line {loop.lineno} (the gradients add up to the same values)",
        f"把 `{losses}` 里的损失加起来只反向传播一次：用 `{summed}` 代替第 {loop.lineno} 行"
        "的循环（梯度累加起来是同样的值）"))
    return Candidate("backward-twice", loop.lineno, 0.9, [
        ("backward-raised", fills), ("losses-in-turn", {"line": loop.lineno, "name": losses})],
        [fix], {"line": loop.lineno, "name": losses})


def _listing(names: list[str]) -> str:
    return ", ".join(f"`{n}`" for n in names[:4])


def _first_body_line(loop: ast.stmt) -> int:
    body = getattr(loop, "body", [])
    return body[0].lineno if body else loop.lineno + 1



FRESH = frozenset({"randn", "rand", "zeros", "ones", "tensor", "randint", "linspace", "arange",
                   "empty", "full", "eye", "normal", "randn_like", "rand_like", "zeros_like",
                   "ones_like", "full_like", "empty_like", "randperm"})
"""Calls that make new data, with no graph behind it."""


def _depends_on_grad(flow: Flow, stmt: ast.stmt) -> bool:
    """A computed tensor, not a constant, a layer, an optimizer or fresh data (made here, or
    in the helper function that returned it)."""
    value = flow.value_of(flow.made_by(stmt))
    if not isinstance(value, (ast.Call, ast.BinOp, ast.Subscript)):
        return False
    if isinstance(value, ast.Call):
        name = call_name(value)
        if name[:1].isupper() or name in FRESH:
            return False
    return True



CUT_STEP = {"data": "cut-data", "no_grad": "cut-no-grad", "nondifferentiable": "cut-op",
            "python": "cut-python", "new": "cut-new"}
CUT_ID = {"no_grad": "no-grad-fn-no-grad-block", "data": "no-grad-fn-detached",
          "python": "no-grad-fn-python-number"}


def check_lost_graph(ctx: Ctx) -> list[Candidate]:
    """backward() on a tensor with no graph. The re-run's provenance walks back from it: to
    the op that cut the graph (``.detach()``, ``.data``, ``no_grad``, argmax, a round trip
    through Python or NumPy), to parameters frozen on purpose, or to tensors created without
    ``requires_grad``."""
    if "does not require grad and does not have a grad_fn" not in ctx.message:
        return []
    flow = ctx.flow
    failed = next((b for b in reversed(ctx.evidence.backwards) if b.raised), None)
    fills: dict[str, object] = {"fail_line": ctx.fail_line or 0,
                                "name": f"`{failed.name}`" if failed and failed.name
                                else THE_LOSS}
    steps: list[tuple[str, dict[str, object]]] = [("no-graph", fills)]
    chain = failed.chain if failed is not None else []
    cut = next((c for c in chain if (c.cut and c.cut != "new") or (c.inputs_rg and
                c.requires_grad is False)), None)
    if cut is not None:
        reason = cut.cut or ("no_grad" if not cut.grad_enabled else "nondifferentiable")
        return [_cut_candidate(ctx, steps, cut.line, reason, cut.op)]
    new = chain[-1] if chain and chain[-1].cut == "new" else None
    end = new.line if new is not None else (chain[-1].line if chain else ctx.fail_line or 0)
    earlier = [o for o in ctx.evidence.ops if o.kind in ("cut", "data") and o.line <= end]
    if earlier:  # rebuilt from values taken out of the graph before
        op = max(earlier, key=lambda o: o.line)
        reason = "python" if op.detail == "python" or (op.kind == "cut" and any(
            o.detail == "python" for o in earlier if o.line == op.line)) else (
            "data" if op.kind == "data" else op.detail or "nondifferentiable")
        trip = round_trip(ctx, op.line, new.line if new is not None else None, backward_runs)
        if trip is not None:
            line, fixes = trip[0], keeping_values(trip[1])
            steps.append((CUT_STEP["python"], {"line": op.line, "op": op.op}))
            if new is not None and new.line != op.line:
                steps.append((CUT_STEP["new"], {"line": new.line, "op": new.op}))
            return [Candidate("no-grad-fn-python-number", line, 0.85, steps, fixes,
                              {"line": line, "op": op.op})]
        return [_cut_candidate(ctx, steps, op.line, reason, op.op)]
    frozen = _freezing_assignments(flow)
    if frozen:
        line = frozen[0].lineno
        steps.append(("frozen", {"line": line}))
        loop = flow.parents.get(frozen[0])
        return [Candidate("no-grad-fn-frozen", line, 0.8, steps, [
            Fix((Edit("delete", line),) if not isinstance(loop, ast.For)
                else (Edit("delete", loop.lineno), Edit("delete", line)),
                runs_clean, T(f"do not freeze the parameters on line {line}",
                              f"不要在第 {line} 行冻结参数"))], {"line": line})]
    leaf = chain[-1] if chain else None
    if leaf is None or leaf.requires_grad is not False:
        return []
    trained = _leaves_to_train(ctx, failed.name if failed else None)
    if trained:  # the weights among the leaves, not the first leaf the history met
        line = trained[0].lineno
        steps.append(("leaf-no-grad", {"line": line, "op": leaf.op}))
        fix = _track_leaves(ctx, trained)
        return [Candidate("no-grad-fn-no-leaf", line, 0.75, steps, [fix] if fix else [],
                          {"line": line})]
    line = leaf.line
    steps.append(("leaf-no-grad", {"line": line, "op": leaf.op}))
    return [Candidate("no-grad-fn-no-leaf", line, 0.7, steps,
                      _requires_grad_fixes(ctx, line, leaf.op), {"line": line})]


WANTS_GRAD = {
    "cannot register a hook on a tensor that doesn't require gradient": "0",
    "can't retain_grad on Tensor that has requires_grad=False": "0",
    "One of the differentiated Tensors does not require grad": "1",
}
"""Messages of a call that needs a tensor requiring grad, and which operand of the failing op
that tensor is (``autograd.grad``'s ``inputs`` are its second)."""


def check_subject_without_grad(ctx: Ctx) -> list[Candidate]:
    """A hook, ``retain_grad()`` or ``autograd.grad``'s inputs on a tensor that does not
    require grad: the same provenance walk as :func:`check_lost_graph`'s, from that tensor to
    where it lost its graph (a ``no_grad`` block around the forward pass, ``.detach()``), or to
    the leaf made without ``requires_grad``."""
    arg = next((a for m, a in WANTS_GRAD.items() if m in ctx.message), None)
    failed = ctx.evidence.failed
    if arg is None or failed is None:
        return []
    subject = next((o for o in failed.inputs if o.arg == arg and not o.requires_grad), None)
    if subject is None or not subject.history:
        return []
    name = f"`{subject.name}`" if subject.name else "its inputs" if arg == "1" else "the tensor"
    steps: list[tuple[str, dict[str, object]]] = [
        ("needs-grad", {"fail_line": ctx.fail_line or failed.line, "op": failed.op,
                        "name": name})]
    chain = subject.history
    cut = next((c for c in chain if (c.cut and c.cut != "new") or (c.inputs_rg and
                c.requires_grad is False)), None)
    if cut is not None:
        reason = cut.cut or ("no_grad" if not cut.grad_enabled else "nondifferentiable")
        found = _cut_candidate(ctx, steps, cut.line, reason, cut.op, "subject-without-grad",
                               runs_clean)
        found.fill["fail_line"] = ctx.fail_line or failed.line
        return [found]
    leaf = chain[-1]
    if leaf.op not in MAKERS:  # a parameter, frozen: ask only for the ones that train
        fix = _trainable_inputs(ctx, ctx.fail_line or failed.line)
        if fix is None:
            return []
        line = fix.edits[0].line
        frozen = _freezing_assignments(ctx.flow)
        steps.append(("frozen-input", {"line": frozen[0].lineno if frozen else line}))
        return [Candidate("grad-inputs-frozen", line, 0.75, steps, [fix], {"line": line})]
    fixes = _requires_grad_fixes(ctx, leaf.line, leaf.op)
    if not fixes:
        return []
    steps.append(("leaf-no-grad", {"line": leaf.line, "op": leaf.op}))
    return [Candidate("subject-without-grad", leaf.line, 0.75, steps, fixes,
                      {"line": leaf.line, "op": leaf.op,
                       "fail_line": ctx.fail_line or failed.line})]


def _freezing_assignments(flow: Flow) -> list[ast.Assign]:
    """``x.requires_grad = False`` statements, in line order."""
    return [s for s in flow.statements if isinstance(s, ast.Assign)
            and any(text(t).endswith(".requires_grad") for t in s.targets)
            and isinstance(s.value, ast.Constant) and s.value.value is False]


def _trainable_inputs(ctx: Ctx, line: int) -> Fix | None:
    """``torch.autograd.grad(loss, params)`` asked only for the parameters that require
    grad: ``[p for p in params if p.requires_grad]``."""
    stmt = ctx.flow.statement_at(line)
    call = next((n for n in ast.walk(stmt) if isinstance(n, ast.Call)
                 and call_name(n) == "grad"), None) if stmt is not None else None
    inputs = None if call is None else call.args[1] if len(call.args) > 1 else next(
        (k.value for k in call.keywords if k.arg == "inputs"), None)
    if inputs is None:
        return None
    wanted = f"[p for p in {text(inputs)} if p.requires_grad]"
    return node_fix(ctx.code, inputs, wanted, runs_clean, T(
        f"ask only for the gradients of what requires grad: `{wanted}` on line {line}",
        f"只对需要梯度的张量求梯度：第 {line} 行写成 `{wanted}`"))


MAKERS = frozenset({"tensor", "randn", "rand", "ones", "zeros", "full", "empty", "arange",
                    "linspace", "normal", "randn_like", "rand_like", "zeros_like",
                    "ones_like", "Tensor", "FloatTensor", "as_tensor"})
WEIGHT_NAME = re.compile(r"^(?:[wWbB]\d*|[wWbB]_\w+|weights?\w*|bias(?:es)?\w*|theta\w*|"
                         r"params?|coefs?|slope|intercept|kernel)$")
"""Names learners give what they train (``w``, ``b1``, ``weights``, ``bias``, ``theta``):
the leaves to track when the program itself does not say (no ``.grad`` read, no optimizer)."""


def _leaves_to_train(ctx: Ctx, loss: str | None) -> list[ast.Assign]:
    """Of the tensors the loss is computed from that were made without ``requires_grad``,
    the ones the program means to train: those whose ``.grad`` it reads or that it gives an
    optimizer; else those named as weights are. Empty when neither tells them apart (the
    first leaf the history met is then the candidate, as before)."""
    flow = ctx.flow
    fail = ctx.fail_line or 0
    if loss is None or not loss.isidentifier():
        return []
    made: list[ast.Assign] = []
    for number in sorted(flow.slice_lines(loss, fail)):
        stmt = flow.statement_at(number)
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(
                stmt.targets[0], ast.Name) and isinstance(stmt.value, ast.Call) and (
                call_name(stmt.value) in MAKERS) and not any(
                k.arg == "requires_grad" for k in stmt.value.keywords):
            made.append(stmt)
    if len(made) < 2:
        return []
    names = {id(s): s.targets[0].id for s in made}  # type: ignore[attr-defined]
    source = ctx.code
    read = [s for s in made if re.search(rf"\b{re.escape(names[id(s)])}\.grad\b", source)
            or any(names[id(s)] in flow.names_in(call) for _, _, call in flow.optimizers())]
    return read or [s for s in made if WEIGHT_NAME.match(names[id(s)])]


def _track_leaves(ctx: Ctx, stmts: list[ast.Assign]) -> Fix | None:
    """One fix that creates every one of them with ``requires_grad=True``."""
    edits: list[Edit] = []
    for stmt in stmts:
        call = stmt.value
        assert isinstance(call, ast.Call)
        wanted = ast.Call(func=call.func, args=call.args, keywords=[
            *call.keywords, ast.keyword(arg="requires_grad", value=ast.Constant(True))])
        edit = replace_node(ctx.code, call, ast.unparse(wanted))
        if edit is None:
            return None
        edits.append(edit)
    each = [f"`{s.targets[0].id}` (line {s.lineno})" for s in stmts]  # type: ignore[attr-defined]
    shown = each[0] if len(each) == 1 else f"{', '.join(each[:-1])} and {each[-1]}"
    shown_zh = "、".join(f"`{s.targets[0].id}`（第 {s.lineno} 行）"  # type: ignore[attr-defined]
                        for s in stmts)
    return Fix(tuple(edits), runs_clean, T(
        f"create {shown} with `requires_grad=True`: the tensors you want gradients for, "
        "not the data",
        f"创建 {shown_zh} 时加上 `requires_grad=True`：它们是要求梯度的张量，而不是数据"))


def _cut_candidate(ctx: Ctx, steps: list[tuple[str, dict[str, object]]], line: int,
                   reason: str, op: str, cid: str | None = None,
                   expect: Expect = backward_runs) -> Candidate:
    if reason == "no_grad":
        stmt = ctx.flow.statement_at(line)
        block = ctx.flow.no_grad_reaching(stmt) if stmt is not None else None
        deco = no_grad_decorator(ctx.flow, line) if block is None else None
        switch = grad_switched_off(ctx.flow, line) if block is None and deco is None else None
        if switch is not None:
            fill: dict[str, object] = {"line": switch.lineno, "fail_line": line,
                                       "op": text(switch.value)}
            return Candidate("grad-switched-off", switch.lineno, 0.85, [
                *steps, (CUT_STEP[reason], {"line": line, "op": op}),
                ("grad-switched-off", fill)], scoped_no_grad(ctx, switch, expect), fill)
        line = block.lineno if block is not None else (deco or line)
    step = "second-derivative" if op == "grad" else CUT_STEP.get(reason, "cut-op")
    steps = [*steps, (step, {"line": line, "op": op})]
    cid = cid or CUT_ID.get(reason, "no-grad-fn-detached" if op == "detach" else "no-grad-fn")
    return Candidate(cid, line, 0.85, steps, cut_fixes(ctx, line, reason, op, expect),
                     {"line": line, "op": op}, direction=surrogate_direction(op)
                     if reason == "nondifferentiable" else None)


def _requires_grad_fixes(ctx: Ctx, line: int, op: str) -> list[Fix]:
    """Create the tensor on ``line`` with ``requires_grad=True``."""
    stmt = ctx.flow.statement_at(line)
    call = next((n for n in ast.walk(stmt) if isinstance(n, ast.Call) and call_name(n) == op),
                None) if stmt is not None else None
    if call is None or any(k.arg == "requires_grad" for k in call.keywords):
        return []
    wanted = ast.Call(func=call.func, args=call.args, keywords=[
        *call.keywords, ast.keyword(arg="requires_grad", value=ast.Constant(True))])
    edit = replace_node(ctx.code, call, ast.unparse(wanted))
    return [Fix((edit,), runs_clean, T(
        f"create the tensor on line {line} with `requires_grad=True`",
        f"在第 {line} 行创建张量时加上 `requires_grad=True`"))] if edit else []


INPLACE_REWRITES = [
    (r"^(\s*)([\w.\[\]]+)\s*([+\-*/])=\s*(.+)$", r"\1\2 = \2 \3 \4"),
    (r"^(\s*)([\w.]+)\.(add|sub|mul|div|clamp|pow)_\((.*)\)\s*$", r"\1\2 = \2.\3(\4)"),
    (r"inplace\s*=\s*True", "inplace=False"),
]



def check_inplace_saved(ctx: Ctx) -> list[Candidate]:
    """A tensor autograd saved was changed in place before backward(). The re-run names each
    in-place change, the op that made the tensor, its grad_fn before and after, and the
    module whose forward did it (``nn.ReLU(inplace=True)``: the root is where the layer is
    built); weights changed by an optimizer step between two backward passes are the other
    way to get there."""
    if "modified by an inplace operation" not in ctx.message:
        return []
    m = re.search(r"output \d+ of (\w+)", ctx.message)
    made_by = m.group(1) if m else None
    fills: dict[str, object] = {"fail_line": ctx.fail_line or 0}
    changes = [o for o in ctx.evidence.ops if o.kind == "inplace"
               and "under no_grad" not in o.detail]

    def matches(op: OpEvidence, before: bool) -> bool:
        node = op.grad_fn if before else op.grad_fn_after
        return made_by is not None and node is not None and (
            node == made_by or node.startswith(made_by + "Backward"))

    # the changed tensor was made by the op the message names (its grad_fn before the
    # change); failing that, the change itself made a node of that name
    hits = [o for o in changes if matches(o, before=True)] or [
        o for o in changes if matches(o, before=False)]
    out: list[Candidate] = []
    for op in (hits or changes)[-2:]:
        conf = 0.85 if hits else 0.6
        steps: list[tuple[str, dict[str, object]]] = [("inplace-failed", fills), (
            "inplace-op", {"line": op.line, "op": op.op,
                           "name": op.name or T("a tensor", "一个张量"),
                           "detail": op.grad_fn or made_by})]
        layer = _inplace_layer(ctx, op)
        if layer is not None:
            line, fix = layer
            steps.append(("inplace-layer", {"line": line, "module": op.module,
                                            "fail_line": op.line}))
            out.append(Candidate("inplace-modified-output", line, conf, steps, [fix],
                                 {"line": line, "op": op.op, "name": op.name}))
            continue
        out.append(Candidate("inplace-modified-output", op.line, conf, steps,
                             _inplace_fixes(ctx, op.line),
                             {"line": op.line, "op": op.op, "name": op.name}))
    out.extend(_crossing_value(ctx, "inplace-modified-output", fills, _stepped_between(ctx)))
    out.extend(_step_between(ctx, fills, 0.6 if hits else 0.8))
    return out


def _failing_backward(ctx: Ctx) -> int | None:
    return next((i for i, b in enumerate(ctx.evidence.backwards) if b.raised), None)


def _stepped_between(ctx: Ctx) -> tuple[set[str], tuple[str, dict[str, object]] | None]:
    """What the failing backward() reaches that an optimizer stepped since an earlier one
    (those weights changed in place under its graph), and the evidence step saying so."""
    failing = _failing_backward(ctx)
    if failing is None:
        return set(), None
    reached = set(ctx.evidence.backwards[failing].reached)
    between = [s for s in ctx.evidence.steps if s.line is not None
               and 1 <= s.after_backward <= failing and reached & set(s.params)]
    if not between:
        return set(), None
    return reached & {p for s in between for p in s.params}, (
        "step-between", {"line": between[-1].line})


def _freed_before(ctx: Ctx) -> tuple[set[str], tuple[str, dict[str, object]] | None]:
    """What the failing backward() reaches that an earlier backward() went through (and
    freed), and the evidence step saying so."""
    failing = _failing_backward(ctx)
    if failing is None or failing == 0:
        return set(), None
    backs = ctx.evidence.backwards
    reached = set(backs[failing].reached)
    earlier = [b for b in backs[:failing] if reached & set(b.reached)]
    if not earlier:
        return set(), None
    return reached & {p for b in earlier for p in b.reached}, (
        "first-backward", {"line": earlier[-1].line})


def _crossing_value(ctx: Ctx, cid: str, fills: dict[str, object],
                    found: tuple[set[str], tuple[str, dict[str, object]] | None]
                    ) -> list[Candidate]:
    """A value passed into the function whose backward() fails, still carrying the graph of
    another network (an actor-critic's TD error, a critic's score used as a weight): the
    failing loss reaches that network through it, where an earlier backward() freed the
    graph or an optimizer step changed the weights in place (``found``: those parameters
    and the evidence). When the loss also trains parameters of its own, the value is only a
    weight there: detach it where the loss uses it. Tried: the run is clean and what the
    loss trains still learns (a value the loss trains through, a GAN's D(fake) for its
    generator, fails that)."""
    foreign, evidence = found
    failing = _failing_backward(ctx)
    fail = ctx.fail_line or 0
    if failing is None or not foreign or evidence is None:
        return []
    own = sorted(set(ctx.evidence.backwards[failing].reached) - foreign)
    call = _stmt_call(ctx.flow, fail, "backward")
    target = receiver(call) if call is not None else None
    function = ctx.flow.function_at(fail)
    # another network: an optimizer of its own trains it, none trains it with this loss's
    held = [set(s.params) for s in ctx.evidence.steps]
    # (a parameter no backward() reached yet is '?' in what a step holds: it may be the
    # loss's own, so an optimizer holding one beside the foreign ones may train both)
    if not own or not target or function is None or not any(h & foreign for h in held) or \
            any(h & foreign and (h & set(own) or "?" in h) for h in held):
        return []
    arguments = function.args.posonlyargs + function.args.args + function.args.kwonlyargs
    given = [a.arg for a in arguments if a.arg not in ("self", "cls")]
    # where the function first assigns each argument itself
    rebound = {n: min(lines) for n in given if (lines := [
        s.lineno for s in ctx.flow.assignments.get(n, [])
        if ctx.flow.function_at(s.lineno) is function])}
    out: list[Candidate] = []
    seen: set[str] = set()
    for line in sorted(ctx.flow.slice_lines(target, fail)):
        stmt = ctx.flow.statement_at(line)
        value = ctx.flow.value_of(stmt) if stmt is not None else None
        if value is None or ctx.flow.function_at(line) is not function:
            continue
        for name in ctx.flow.names_in(value):
            # an argument used as it came in (not first rebound here), not an index
            # (`probs[0, a]`), not data a tensor is made from (`torch.Tensor(s)`)
            if name not in given or name in seen or rebound.get(name, line + 1) < line or \
                    _only_inside(value, name, _indices(value)) or \
                    _only_inside(value, name, _converted(value)) or \
                    _called_in(value, name) or not _computed_by_caller(ctx, function, name):
                continue
            seen.add(name)
            edit = replace_in_line(ctx.code, line, rf"\b{re.escape(name)}\b(?!\.detach)",
                                   f"{name}.detach()")
            if edit is None:
                continue
            # below the step-between candidate when its change does not work (that one's
            # direction, recompute after the step, is the GAN's usual fix)
            out.append(Candidate(cid, line, 0.75, [
                (("backward-raised" if cid.startswith("backward") else "inplace-failed"),
                 fills),
                evidence,
                ("crossing-value", {"line": line, "name": name, "fail_line": fail,
                                    "params": _listing(sorted(foreign))})],
                [Fix((edit,), params_learn(own), T(
                    f"use `{name}` as a plain weight on line {line}: `{name}.detach()`, so "
                    "this loss no longer reaches the network that computed it",
                    f"第 {line} 行把 `{name}` 当作普通的权重：`{name}.detach()`，"
                    "这样这个损失不再传回计算它的那个网络"))],
                {"line": line, "name": name}, only_if_tried=True))
    return out[:2]


def _called_in(value: ast.AST, name: str) -> bool:
    """Whether ``name`` is called (``netG(z)``) or has a method called (``net.forward(x)``)
    in ``value``: a module or a function, not a value with a graph."""
    return any(isinstance(n, ast.Call) and (
        (isinstance(n.func, ast.Name) and n.func.id == name) or (
            isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name)
            and n.func.value.id == name)) for n in ast.walk(value))


def _computed_by_caller(ctx: Ctx, function: ast.AST, name: str) -> bool:
    """Whether some call of ``function`` gives ``name`` a value the caller computed with a
    call of its own (``td_error = critic.learn(...)``), not data made there (``torch.randn``,
    a batch from a list)."""
    flow = ctx.flow
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    for call, given in flow.arguments_for(function, name):
        value: ast.AST | None = given
        if isinstance(given, ast.Name):
            made = flow.assigned_before(given.id, call.lineno)
            value = flow.value_of(made) if made is not None else None
        if value is not None and any(
                isinstance(n, ast.Call) and call_name(n) not in MAKERS | CONVERTERS
                for n in ast.walk(value)):
            return True
    return False


def _only_inside(value: ast.AST, name: str, parts: list[ast.AST]) -> bool:
    """Whether every use of ``name`` in ``value`` lies inside one of ``parts``."""
    uses = [n for n in ast.walk(value) if isinstance(n, ast.Name) and n.id == name]
    inside = {id(n) for part in parts for n in ast.walk(part) if isinstance(n, ast.Name)}
    return bool(uses) and all(id(n) in inside for n in uses)


def _indices(value: ast.AST) -> list[ast.AST]:
    """The subscripts' indices in ``value`` (``probs[0, a]``: ``0, a``)."""
    return [sub.slice for sub in ast.walk(value) if isinstance(sub, ast.Subscript)]


def _converted(value: ast.AST) -> list[ast.AST]:
    """The calls in ``value`` that make a tensor from data (``torch.Tensor(s[None])``)."""
    return [call for call in ast.walk(value)
            if isinstance(call, ast.Call) and call_name(call) in CONVERTERS]


def _inplace_layer(ctx: Ctx, op: OpEvidence) -> tuple[int, Fix] | None:
    """The layer built with ``inplace=True`` whose forward made the change: where it is
    built, and the fix that builds it out of place."""
    if not op.module:
        return None
    call = ctx.flow.constructor(op.module, op.module_kind)
    flag = next((k for k in call.keywords if k.arg == "inplace"), None) if call else None
    if flag is None:
        return None
    edit = replace_node(ctx.code, flag.value, "False")
    if edit is None:
        return None
    return flag.value.lineno, Fix((edit,), runs_clean, T(
        f"build `{op.module}` out of place on line {flag.value.lineno}: `inplace=False`",
        f"第 {flag.value.lineno} 行把 `{op.module}` 建成非原地的：`inplace=False`"))


def _step_between(ctx: Ctx, fills: dict[str, object], conf: float) -> list[Candidate]:
    """An optimizer step between two backward() passes over graphs that saved the weights:
    the step changes them in place. Step once, after every backward()."""
    backs = ctx.evidence.backwards
    failing = next((i for i, b in enumerate(backs) if b.raised), len(backs))
    fail = ctx.fail_line or 0
    out = []
    between = [s for s in ctx.evidence.steps
               if s.line is not None and 1 <= s.after_backward <= failing]
    # the step that changed what the failing graph saved updates parameters that graph
    # reaches: another optimizer's step in between (a classifier's, in a GAN) changed none
    reached = set(backs[failing].reached) if failing < len(backs) else set()
    touching = [s for s in between if reached & set(s.params)]
    for step in touching or between:
        assert step.line is not None
        line = step.line
        stepper = _stmt_call(ctx.flow, line, "step")
        # a later step() of the same optimizer makes this one a second step: remove it;
        # otherwise (another optimizer's step follows, or none) it moves below the last
        # backward(): removing it would stop training what it steps (hides_bug refuses it)
        again = [c for c in ctx.flow.calls_named("step") if c.lineno > fail
                 and stepper is not None and receiver(c) == receiver(stepper)]
        edits = [Edit("delete", line)] if again else [Edit("move_after", line, to=fail)]
        fixes = [Fix((edit,), runs_clean, T(
            "call every backward() before optimizer.step(): " + (
                f"remove the step on line {line}" if edit.kind == "delete"
                else f"move the step on line {line} below line {fail}"),
            "先完成所有 backward() 再调用 step()：" + (
                f"删除第 {line} 行的 step" if edit.kind == "delete"
                else f"把第 {line} 行的 step 移到第 {fail} 行之后"))) for edit in edits]
        cid = "inplace-modified-output" if ", which is output" in ctx.message else \
            "inplace-modified-input"  # the catalog's words follow the message's form
        out.append(Candidate(cid, line, conf, [
            ("inplace-failed", fills), ("step-between", {"line": line})], fixes, {"line": line},
            # (detaching what the two losses share, offered here before, also cuts the
            # second loss off from what it must train: a GAN's generator, corpus15)
            direction=T(
                f"The step on line {line} changes the weights that the graph of the backward() "
                f"on line {fail} saved. Compute the second loss again after the step (run the "
                "forward pass it comes from after that step), so its graph holds the new "
                "weights.",
                f"第 {line} 行的 step 改变了第 {fail} 行 backward() 的计算图所保存的权重。"
                "在 step 之后重新计算第二个损失（在那次 step 之后再做一次它所依赖的前向计算），"
                "让它的计算图保存新的权重。")))
        break
    return out


def _inplace_fixes(ctx: Ctx, line: int) -> list[Fix]:
    fixes = []
    for pattern, repl in INPLACE_REWRITES:
        edit = replace_in_line(ctx.code, line, pattern, repl)
        if edit is not None:
            fixes.append(Fix((edit,), runs_clean,
                             T(f"make line {line} out of place: `{edit.text.strip()}`",
                               f"把第 {line} 行改为非原地运算：`{edit.text.strip()}`")))
    src = ctx.flow.line(line)
    m = re.match(r"^\s*([\w.]+)\[", src)
    if m:
        name = m.group(1)
        fixes.append(Fix((Edit("insert_before", line, f"{name} = {name}.clone()"),), runs_clean,
                         T(f"work on a copy: `{name} = {name}.clone()` before line {line}",
                           f"在第 {line} 行之前复制一份：`{name} = {name}.clone()`")))
    return fixes



def check_leaf_inplace(ctx: Ctx) -> list[Candidate]:
    """A leaf that requires grad changed in place. Where the program uses the result (``y =
    relu_(w)``, a layer built with ``inplace=True`` applied to a parameter), it wanted a new
    tensor: the out-of-place op is the fix, and ``no_grad`` (which would overwrite the
    parameter at every forward pass) is the last thing tried. A statement that only changes
    the leaf (``w[0] = 1``, ``w += 1``) is a deliberate change: ``no_grad`` around it, and
    around the changes of the same tensor that follow it."""
    if "leaf Variable that requires grad is being used in an in-place" not in ctx.message:
        return []
    line = ctx.fail_line or 0
    cid = "leaf-view-inplace" if "a view of a leaf" in ctx.message else "leaf-inplace"
    stmt = ctx.flow.statement_at(line)
    uses_grad = stmt is not None and ".grad" in text(stmt)
    if uses_grad:
        cid = "leaf-inplace-update"
    steps: list[tuple[str, dict[str, object]]] = [("leaf-inplace", {"line": line})]
    run = _changes_of_same_tensor(ctx.flow, stmt) if stmt is not None else []
    last = run[-1].lineno if run else line
    where = f"line {line}" if last == line else f"lines {line}-{last}"
    where_zh = f"第 {line} 行" if last == line else f"第 {line}-{last} 行"
    wrap = Fix(_wrap_no_grad_lines(ctx.code, [s.lineno for s in run] or [line]), runs_clean,
               T(f"do the change on {where} under `with torch.no_grad():`",
                 f"把{where_zh}的修改放进 `with torch.no_grad():`"))
    rewrites = []
    for pattern, repl in INPLACE_REWRITES[:1]:
        edit = replace_in_line(ctx.code, line, pattern, repl)
        if edit is not None and not uses_grad:
            rewrites.append(Fix((edit,), runs_clean,
                                T(f"make line {line} out of place: `{edit.text.strip()}`",
                                  f"把第 {line} 行改为非原地运算：`{edit.text.strip()}`")))
    if stmt is None or not _result_used(stmt):
        return [Candidate(cid, line, 0.8, steps, [wrap, *rewrites], {"line": line})]
    fixes: list[Fix] = []
    failed = ctx.evidence.failed
    if failed is not None and failed.line == line and failed.module:
        op = OpEvidence(line=line, kind="inplace", op=failed.op, module=failed.module,
                        module_kind=failed.module_kind)
        layer = _inplace_layer(ctx, op)
        if layer is not None:
            built, fix = layer
            steps.append(("inplace-layer", {"line": built, "module": module_label(
                failed.module), "fail_line": line}))
            fixes.append(fix)
    fixes.extend(_out_of_place_calls(ctx, stmt, line))
    return [Candidate(cid, line, 0.85, steps, [*fixes, *rewrites, wrap], {"line": line})]


def _result_used(stmt: ast.stmt) -> bool:
    """The statement binds or returns what it computes (``y = f(w)``, ``return f(w)``), so
    the in-place op in it was asked for a value, not for a change of the leaf."""
    return isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.Return)) and not any(
        isinstance(t, ast.Subscript) for t in getattr(stmt, "targets", []))


def _out_of_place_calls(ctx: Ctx, stmt: ast.stmt, line: int) -> list[Fix]:
    """``torch.relu_(w)`` / ``w.clamp_(0)`` in a statement that uses the result: the same op
    without the trailing underscore."""
    calls = [n for n in ast.walk(stmt) if isinstance(n, ast.Call) and isinstance(
        n.func, (ast.Attribute, ast.Name)) and call_name(n).endswith("_")
        and not call_name(n).endswith("__")]
    changes: list[tuple[ast.AST, str]] = [(c.func, text(c.func)[:-1]) for c in calls]
    # ``F.relu(x, inplace=True)``: the same call told to make a new tensor
    changes += [(k.value, "False") for n in ast.walk(stmt) if isinstance(n, ast.Call)
                for k in n.keywords if k.arg == "inplace" and isinstance(k.value, ast.Constant)
                and k.value.value is True]
    edit = replace_nodes(ctx.code, changes) if changes else None
    if edit is None:
        return []
    return [Fix((edit,), runs_clean, T(f"use the out-of-place op on line {line}: "
                                       f"`{edit.text.strip()}`",
                                       f"第 {line} 行改用非原地运算：`{edit.text.strip()}`"))]


def _inplace_base(stmt: ast.stmt) -> str | None:
    """The tensor a statement changes in place: ``w`` for ``w[0] = 1``, ``w += 1``,
    ``w.fill_(0)``."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(
            stmt.targets[0], ast.Subscript):
        return text(stmt.targets[0].value)
    if isinstance(stmt, ast.AugAssign):
        target = stmt.target
        return text(target.value if isinstance(target, ast.Subscript) else target)
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        name = call_name(stmt.value)
        if name.endswith("_") and not name.endswith("__"):
            return receiver(stmt.value)
    return None


def _changes_of_same_tensor(flow: Flow, stmt: ast.stmt) -> list[ast.stmt]:
    """The statement and the ones right after it in its block that change the same tensor in
    place (``m.weight[0, 0] = 1`` then ``m.weight[0, 1] = 2``): one ``no_grad`` covers them."""
    base = _inplace_base(stmt)
    if base is None:
        return []
    body = _siblings(flow, stmt)
    run = []
    for sibling in body:
        if _inplace_base(sibling) != base or sibling.lineno != (sibling.end_lineno or 0):
            break
        run.append(sibling)
    return run


def _wrap_no_grad_lines(code: str, lines: list[int]) -> tuple[Edit, ...]:
    """``with torch.no_grad():`` above the first of consecutive one-line statements, each
    indented under it."""
    source = code.splitlines()
    head = indent_of(source[lines[0] - 1])
    edits = [Edit("replace", n, head + "    " + source[n - 1].strip()) for n in lines[1:]]
    return (*_wrap_no_grad(code, lines[0]), *edits)


def check_non_scalar(ctx: Ctx) -> list[Candidate]:
    if "only for scalar outputs" not in ctx.message:
        return []
    flow, line = ctx.flow, ctx.fail_line or 0
    failed = next((b for b in reversed(ctx.evidence.backwards) if b.raised), None)
    shape = tuple(failed.shape) if failed and failed.shape is not None else None
    steps: list[tuple[str, dict[str, object]]] = [
        ("non-scalar", {"line": line, "shape": str(shape) if shape else None})]
    fixes = []
    edit = replace_in_line(ctx.code, line, r"\.backward\(\)", ".sum().backward()")
    if edit is not None:
        fixes.append(Fix((edit,), runs_clean, T(f"reduce it first on line {line}: "
                                                f"`{edit.text.strip()}`",
                                                f"在第 {line} 行先归约：`{edit.text.strip()}`")))
    edit = replace_in_line(ctx.code, line, r"grad\((\s*outputs\s*=\s*)?(\w+),",
                           r"grad(\1\2.sum(),")
    if edit is not None:
        fixes.append(Fix((edit,), runs_clean, T(f"differentiate a scalar on line {line}: "
                                                f"`{edit.text.strip()}`",
                                                f"在第 {line} 行对标量求导："
                                                f"`{edit.text.strip()}`")))
    root = line
    for stmt in flow.statements:
        if isinstance(stmt, ast.Assign) and "reduction" in text(stmt.value) \
                and "'none'" in text(stmt.value).replace('"', "'"):
            root = stmt.lineno
            steps.append(("reduction-none", {"line": root}))
            edit = replace_in_line(ctx.code, root, r"\(\s*reduction\s*=\s*['\"]none['\"]\s*\)",
                                   "()")
            if edit is not None:
                fixes.insert(0, Fix((edit,), runs_clean,
                                    T(f"use the default mean reduction on line {root}",
                                      f"在第 {root} 行使用默认的 mean 归约")))
    return [Candidate("non-scalar-backward", root, 0.85, steps, fixes, {"line": root})]



def check_numpy(ctx: Ctx) -> list[Candidate]:
    if "Can't call numpy() on Tensor that requires grad" not in ctx.message:
        return []
    history = _loss_history(ctx)
    if history:
        return history
    line, stmt = ctx.failing_statement()
    converted = [call.func.value for call in (ast.walk(stmt) if stmt else ()) if isinstance(
        call, ast.Call) and call_name(call) == "numpy" and isinstance(call.func, ast.Attribute)]
    if len(converted) > 1:
        # `x.numpy(), emb[u].numpy()`: which one requires grad, the trials tell (detaching
        # the other still fails); each its own candidate, named by what it converts
        return [_detached(ctx, line, tensor, T(
            "detach it before converting on line {line}: `{shown}.numpy()`",
            "第 {line} 行转换前先 detach：`{shown}.numpy()`"), only_if_tried=True)
            for tensor in converted]
    edit = replace_in_line(ctx.code, line, r"\.numpy\(\)", ".detach().numpy()")
    fixes = [Fix((edit,), runs_clean, T(f"detach before converting on line {line}",
                                        f"在第 {line} 行转换前先 detach")) if edit else None]
    out = at_failing_line(ctx, "numpy-requires-grad", "numpy", fixes, 0.85)
    for call in (n for n in ast.walk(stmt) if isinstance(n, ast.Call)) if stmt else ():
        # np.asarray(x @ a): what is converted may be a tensor or a list of them; the
        # trial tells (a list has no .detach()). Its own candidate: where its change is the
        # one that works, the text names what it converts, not the line's first `.numpy()`
        if call_name(call) in ("array", "asarray") and call.args and not isinstance(
                call.args[0], (ast.List, ast.Tuple, ast.Constant)):
            out.append(_detached(ctx, line, call.args[0], T(
                "detach it before NumPy gets it on line {line}: `{shown}`",
                "第 {line} 行在交给 NumPy 之前先 detach：`{shown}`")))
    return out


def _detached(ctx: Ctx, line: int, tensor: ast.expr, words: Text, *,
              only_if_tried: bool = False) -> Candidate:
    """numpy-requires-grad for what one expression converts, with it detached as the fix."""
    shown = postfix(tensor, ".detach()")
    fix = node_fix(ctx.code, tensor, shown, runs_clean, T(
        words.en.format(line=line, shown=shown), words.zh.format(line=line, shown=shown)))
    facts = {"line": line, "tensor": f"`{text(tensor)}`", "tensor_code": text(tensor)}
    return Candidate("numpy-requires-grad", line, 0.85, [("numpy", facts)],
                     [fix] if fix is not None else [], facts, only_if_tried=only_if_tried)


def _loss_history(ctx: Ctx) -> list[Candidate]:
    """What the failing line turns into NumPy is a Python list (``np.array(self.cost_his)``)
    the program appends losses to, each with its graph: the list has no ``.detach()``; the
    root is the append, which should keep the number (``loss.item()``)."""
    flow, fail = ctx.flow, ctx.fail_line or 0
    stmt = flow.statement_at(fail)
    if stmt is None:
        return []
    given = {text(a) for n in ast.walk(stmt) if isinstance(n, ast.Call) for a in n.args} | {
        receiver(n) or "" for n in ast.walk(stmt) if isinstance(n, ast.Call)
        and call_name(n) == "numpy"}
    losses = {b.name for b in ctx.evidence.backwards if b.name and isinstance(b.loss, float)}
    out = []
    for name in sorted(given):
        starts = [flow.value_of(s) for s in flow.assignments.get(name, [])]
        if not any(isinstance(v, ast.List) and not v.elts for v in starts):
            continue
        for call in flow.calls_named("append"):
            item = call.args[0] if len(call.args) == 1 else None
            if receiver(call) != name or not isinstance(item, ast.Name) or item.id not in losses:
                continue
            line = call.lineno
            edit = replace_node(ctx.code, item, f"{item.id}.item()")
            ctx.refuted.add("numpy-requires-grad")  # its subject is the list, not a tensor
            out.append(Candidate("numpy-of-loss-history", line, 0.9, [
                ("loss-history", {"line": line, "name": name, "op": item.id,
                                  "fail_line": fail})],
                [Fix((edit,), runs_clean, T(
                    f"keep the number, not the tensor, in `{name}` (line {line}): "
                    f"`{name}.append({item.id}.item())`",
                    f"第 {line} 行在 `{name}` 里保存数值而不是张量："
                    f"`{name}.append({item.id}.item())`"))] if edit else [],
                {"line": line, "name": name, "op": item.id, "fail_line": fail}))
    return out or _loss_totals(ctx, losses)


def _loss_totals(ctx: Ctx, losses: set[str]) -> list[Candidate]:
    """A running total of losses added as tensors (``train_loss += loss``) and handed on
    (returned, stored) to what the failing line converts: each total is a candidate, and the
    trial (``.item()`` where it adds) says which one it was."""
    out = []
    fail = ctx.fail_line or 0
    for stmt in ctx.flow.statements:
        if not (isinstance(stmt, ast.AugAssign) and isinstance(stmt.op, ast.Add)
                and isinstance(stmt.value, ast.Name) and stmt.value.id in losses
                and isinstance(stmt.target, ast.Name)):
            continue
        name, item = stmt.target.id, stmt.value.id
        edit = replace_node(ctx.code, stmt.value, f"{item}.item()")
        fill = {"line": stmt.lineno, "name": name, "op": item, "fail_line": fail}
        out.append(Candidate("numpy-of-loss-total", stmt.lineno, 0.6, [("loss-total", fill)], [
            Fix((edit,), runs_clean, T(
                f"add the number, not the tensor, to `{name}` (line {stmt.lineno}): "
                f"`{name} += {item}.item()`",
                f"第 {stmt.lineno} 行给 `{name}` 累加数值而不是张量：`{name} += {item}.item()`"))]
            if edit else [], fill))
    return out


def check_grad_none(ctx: Ctx) -> list[Candidate]:
    if "NoneType" not in ctx.message:
        return []
    flow, fail = ctx.flow, ctx.fail_line or 0
    stmt = flow.statement_at(fail)
    if stmt is None:
        return []
    owners = [text(n.value) for n in ast.walk(stmt)
              if isinstance(n, ast.Attribute) and n.attr == "grad"]
    out = []
    loops = flow.loops_of(stmt)
    for owner in owners:
        # a definition later in the same loop reaches this use on the next pass
        carried = [s for s in flow.assignments.get(owner, []) if loops and s.lineno >= fail
                   and loops[0] in flow.ancestors(s)]
        made = (carried[0] if carried else None) or flow.assigned_before(owner, fail, stmt) \
            or flow.assigned_before(owner, fail)
        if made is None and owner.startswith("self."):
            made = next(iter(flow.assignments.get(owner, [])), None)
        if made is None:
            continue
        value = flow.value_of(made)
        src = text(value) if value is not None else ""
        line = made.lineno
        seen, owner = owner, flow.name_at(made, owner)  # the name where it was made
        if "requires_grad=True" in src and isinstance(value, (ast.BinOp, ast.Call)) and not (
                isinstance(value, ast.Call)
                and any(k.arg == "requires_grad" for k in value.keywords)):
            inner = src
            edit = Edit("replace", line, indent_of(flow.line(line)) +
                        text(made).split("=")[0].strip() + " = (" +
                        inner.replace(", requires_grad=True", "") + ").requires_grad_()")
            out.append(Candidate("grad-none-nonleaf", line, 0.8, [
                ("grad-none", {"fail_line": fail, "name": seen}),
                ("not-leaf", {"line": line, "name": owner})],
                [Fix((edit,), runs_clean, T(f"make `{owner}` the leaf on line {line}: "
                                            f"`{edit.text.strip()}`",
                                            f"在第 {line} 行让 `{owner}` 成为叶子张量："
                                            f"`{edit.text.strip()}`"))], {"line": line,
                                                                          "name": owner}))
        elif isinstance(value, ast.BinOp) and owner in flow.names_in(value) and ".grad" in src:
            # w = w - lr * w.grad makes w a new, non-leaf tensor
            op = {ast.Sub: "-=", ast.Add: "+="}.get(type(value.op))
            if op:
                new = f"{owner} {op} {text(value.right)}"
                edit = Edit("replace", line, indent_of(flow.line(line)) + "with torch.no_grad():\n"
                            + indent_of(flow.line(line)) + "    " + new)
                out.append(Candidate("grad-none-nonleaf", line, 0.8, [
                    ("grad-none", {"fail_line": fail, "name": seen}),
                    ("rebound", {"line": line, "name": owner})],
                    [Fix((edit, Edit("insert_after", line, f"{owner}.grad.zero_()")), runs_clean,
                         T(f"update `{owner}` in place under `torch.no_grad()` on line {line}",
                           f"在第 {line} 行于 `torch.no_grad()` 下原地更新 `{owner}`"))],
                    {"line": line, "name": owner}))
        elif (converted := isinstance(value, ast.Call) and call_name(value) in (
                "softmax", "double", "float", "to", "cuda", "sigmoid")) or (
                value is not None and any(isinstance(n, ast.BinOp) for n in ast.walk(value))
                and "requires_grad" not in src):
            out.append(Candidate("grad-none-nonleaf", line, 0.7 if converted else 0.6, [
                ("grad-none", {"fail_line": fail, "name": seen}),
                ("not-leaf", {"line": line, "name": owner})],
                [Fix((Edit("insert_after", line, f"{owner}.retain_grad()"),), runs_clean,
                     T(f"keep this tensor's gradient: `{owner}.retain_grad()` after line {line}",
                       f"保留该张量的梯度：在第 {line} 行之后调用 `{owner}.retain_grad()`"))],
                {"line": line, "name": owner}))
    backs = [b.line for b in ctx.evidence.backwards]
    if not out and owners and backs:
        out.extend(_unreached_in_loop(ctx, stmt, owners[0]))
    if not out and owners and not backs:
        # .grad read before any backward ran: clearing it is done by setting it to None
        # (what zero_grad() does), which works before the first backward() too
        edits = tuple(Edit("replace", s.lineno, indent_of(flow.line(s.lineno)) +
                           f"{_zeroed(s)}.grad = None") for s in _siblings(flow, stmt)
                      if _zeroed(s))
        fixes = [Fix(edits, runs_clean, T(
            "clear the gradients with `.grad = None` (lines "
            f"{', '.join(str(e.line) for e in edits)}): `.grad` is None until the first "
            "backward()", f"用 `.grad = None` 清除梯度（第 {', '.join(str(e.line) for e in edits)} "
            "行）：第一次 backward() 之前 `.grad` 是 None"))] if edits else []
        edit = Edit("replace", fail, indent_of(flow.line(fail)) + f"if {owners[0]}.grad is not "
                    f"None: " + flow.line(fail).strip())
        fixes.append(Fix((edit,), runs_clean, T(f"only clear `{owners[0]}.grad` once it exists",
                                                f"只在 `{owners[0]}.grad` 存在时清零")))
        out.append(Candidate("grad-is-none", fail, 0.6, [
            ("grad-before-backward", {"fail_line": fail, "name": owners[0]})], fixes,
            {"line": fail, "name": owners[0]}))
    return out


def _unreached_in_loop(ctx: Ctx, stmt: ast.stmt, owner: str) -> list[Candidate]:
    """``for p in model.parameters(): p.grad *= k`` after backward() ran: the re-run shows
    parameters of the model no backward() reached (a head the loss does not use), whose
    ``.grad`` stays None. Skipping those is the change to try; the evidence names them."""
    flow, fail = ctx.flow, ctx.fail_line or 0
    loop = next((a for a in flow.ancestors(stmt) if isinstance(a, ast.For)
                 and owner in target_names(a.target) and isinstance(a.iter, ast.Call)
                 and call_name(a.iter) in ("parameters", "named_parameters")), None)
    unreached = [p.name for p in ctx.evidence.params if not p.reached and p.grad_none
                 and p.requires_grad]
    if loop is None or not unreached or not any(p.reached for p in ctx.evidence.params):
        return []
    line = flow.line(fail)
    edit = Edit("replace", fail, f"{indent_of(line)}if {owner}.grad is not None: {line.strip()}")
    back = ctx.evidence.backwards[-1].line
    fill: dict[str, object] = {"line": back, "params": _listing(unreached), "fail_line": fail,
                               "name": owner}
    return [Candidate("grad-none", fail, 0.75, [("not-reached", fill)], [Fix((edit,), runs_clean,
        T(f"skip the parameters backward() does not reach on line {fail}: "
          f"`if {owner}.grad is not None:`",
          f"第 {fail} 行跳过 backward() 没有到达的参数：`if {owner}.grad is not None:`"))],
        fill)]


def _zeroed(stmt: ast.stmt) -> str | None:
    """``w`` for the statement ``w.grad.zero_()``."""
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    if isinstance(call, ast.Call) and call_name(call) == "zero_" and isinstance(
            call.func, ast.Attribute) and isinstance(call.func.value, ast.Attribute) and \
            call.func.value.attr == "grad":
        return text(call.func.value.value)
    return None


def _siblings(flow: Flow, stmt: ast.stmt) -> list[ast.stmt]:
    """The statements of the block that holds ``stmt``, from it on."""
    parent = flow.parents.get(stmt)
    body = next((b for b in (getattr(parent, "body", None), getattr(parent, "orelse", None))
                 if isinstance(b, list) and stmt in b), [stmt])
    return body[body.index(stmt):]



def check_int_requires_grad(ctx: Ctx) -> list[Candidate]:
    if "floating point" not in ctx.message or "require gradients" not in ctx.message:
        return []
    flow, fail = ctx.flow, ctx.fail_line or 0
    line = fail
    stmt = flow.statement_at(fail)
    tensor = _asked_to_require_grad(stmt) if stmt is not None else None
    if isinstance(tensor, (ast.Name, ast.Attribute)):
        # a tensor made elsewhere: its making is the root (in the helper that returned it,
        # if one did); a tensor made on this line (``torch.arange(n).requires_grad_()``) is
        # rooted here, whatever the names its constructor is given
        made = flow.assigned_before(text(tensor), fail)
        if made is not None:
            line = flow.made_by(made).lineno
    src = flow.line(line)
    edit = None
    if "dtype=torch.long" in src:
        edit = replace_in_line(ctx.code, line, r"dtype=torch\.long", "dtype=torch.float32")
    elif "arange(" in src:
        edit = replace_in_line(ctx.code, line, r"arange\(([^)]*)\)",
                               r"arange(\1, dtype=torch.float32)")
    else:
        edit = replace_in_line(ctx.code, line, r"\[([\d, ]+)\]",
                               lambda m: "[" + ", ".join(f"{v.strip()}." for v in
                                                         m.group(1).split(",")) + "]")  # type: ignore[arg-type]
    fixes = [Fix((edit,), runs_clean, T(f"create a floating-point tensor on line {line}",
                                        f"在第 {line} 行创建浮点张量"))] if edit else []
    return [Candidate("int-requires-grad", line, 0.8, [("int-grad", {"line": line})], fixes,
                      {"line": line})]



def _asked_to_require_grad(stmt: ast.stmt) -> ast.expr | None:
    """The tensor the statement asks to require grad: the receiver of ``requires_grad_()``
    or the target of ``.requires_grad = True``; None where it is made with
    ``requires_grad=True`` (the statement itself makes it)."""
    for node in ast.walk(stmt):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and (
                node.func.attr == "requires_grad_"):
            return node.func.value
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Attribute) and target.attr == "requires_grad":
                    return target.value
    return None


def check_nonleaf_requires_grad(ctx: Ctx) -> list[Candidate]:
    if "can only change requires_grad flags of leaf variables" not in ctx.message:
        return []
    line = ctx.fail_line or 0
    return at_failing_line(ctx, "nonleaf-requires-grad", "nonleaf-flag", [
        Fix((Edit("delete", line),), runs_clean,
            T(f"remove line {line}: a computed tensor's flag comes from its inputs",
              f"删除第 {line} 行：计算得到的张量的标志来自它的输入"))])


EXCEPTION_CHECKS: tuple[Check, ...] = (check_backward_twice, check_lost_graph, check_inplace_saved,
                                       check_leaf_inplace, check_non_scalar, check_numpy,
                                       check_grad_none, check_int_requires_grad,
                                       check_nonleaf_requires_grad, check_subject_without_grad)
SILENT_CHECKS: tuple[Check, ...] = ()

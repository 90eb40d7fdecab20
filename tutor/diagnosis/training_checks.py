"""Checks of silent bugs: a program that runs but does not learn. Each joins what the
instrumented re-run saw (losses, steps, parameters, module calls) with the source's order of
statements; the list comes from the real programs of the diagnosis corpus."""

from __future__ import annotations

import ast
import itertools
import re
from collections.abc import Sequence

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.cuts import cut_fixes, round_trip
from tutor.diagnosis.fixes import Edit, Expect, Fix, losses, node_fix, replace_in_line, replace_node
from tutor.diagnosis.flow import Flow, call_name, receiver, text
from tutor.diagnosis.graph_checks import CUT_STEP, _first_body_line, _stmt_call
from tutor.diagnosis.symptoms import parameters_move
from tutor.diagnosis.verify import (
    all_of,
    backward_runs,
    both,
    cut_gone,
    eval_at_prediction,
    grads_fresh,
    loss_falls_steadily,
    loss_improves,
    no_broadcast_warning,
    params_learn,
    params_reached,
    runs_clean,
    runs_clean_with_grad,
)
from tutor.i18n import T, Text
from tutor.sandbox.models import BackwardEvidence, Evidence, ModuleCallEvidence, ParamEvidence


def _eval_candidates(ctx: Ctx, cid: str, batchnorm: bool = False) -> list[Candidate]:
    flow = ctx.flow
    ev = ctx.evidence
    calls = [m for m in ev.modules if (m.batchnorm if batchnorm else m.dropout) and m.training
             and (not m.grad_enabled or not ev.backwards or (m.after_backward
                  and not _is_training_line(ctx, m.line)))]
    if not calls:
        return []
    first = min(calls, key=lambda m: m.line)
    stmt = flow.statement_at(first.line)
    block = flow.in_no_grad(stmt) if stmt is not None else None
    at = block.lineno if block is not None else first.line
    # the model's name at the top level (the prediction may be inside a function); a
    # model kept on an object is named with it (`self.model`)
    parts = first.module.split(".")
    model = ".".join(parts[:2]) if parts[0] == "self" and len(parts) > 1 else parts[0]
    if f"self.{model}" in flow.line(first.line):  # the name the predicting code uses
        model = f"self.{model}"
    if stmt is not None:
        scope = flow.scope_of(stmt)
        if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
            at = (block.lineno if block is not None else first.line)
    fix = Fix((Edit("insert_before", at, f"{model}.eval()"),),
              both(eval_at_prediction({first.line}), runs_clean if batchnorm else
                   (lambda o, f: None)),
              T(f"switch `{model}` to evaluation mode before predicting: `{model}.eval()` "
                f"before line {at}", f"预测前把 `{model}` 切换到评估模式：在第 {at} 行之前调用 "
                f"`{model}.eval()`"))
    # the training that follows (a next epoch) needs training mode back: eval() alone then
    # trains in eval mode, and that fix is refused for what its run shows
    end = (block.end_lineno if block is not None else stmt.end_lineno if stmt is not None
           else None) or first.line
    restored = Fix((Edit("insert_before", at, f"{model}.eval()"),
                    Edit("insert_after", end, f"{model}.train()")), fix.expect, T(
        f"switch `{model}` to evaluation mode before predicting and back to training mode "
        f"after it: `{model}.eval()` before line {at}, `{model}.train()` after line {end}",
        f"预测前把 `{model}` 切换到评估模式、预测后切回训练模式：在第 {at} 行之前调用 "
        f"`{model}.eval()`，在第 {end} 行之后调用 `{model}.train()`"))
    roots = sorted({at, first.line})
    return [*_train_before_predicting(ctx, cid, first.line, model, batchnorm),
            Candidate(cid, roots[0], 0.8, [
                ("predict-train-mode", {"line": first.line, "module": model}),
                ("no-eval", {"name": model}),
            ], [fix, restored], {"line": roots[0], "module": model, "model": model})]


def _train_before_predicting(ctx: Ctx, cid: str, line: int, model: str, batchnorm: bool
                             ) -> list[Candidate]:
    """The prediction follows a ``model.train()`` in its own function (after an ``eval()``,
    or instead of one): that call is what puts it in training mode."""
    flow = ctx.flow
    stmt = flow.statement_at(line)
    if stmt is None:
        return []
    scope = flow.scope_of(stmt)
    last = model.split(".")[-1]
    trains = [c for c in flow.calls_named("train") if c.lineno < line
              and (receiver(c) or "").split(".")[-1] == last
              and (site := flow.statement_at(c.lineno)) is not None
              and flow.scope_of(site) is scope and isinstance(site, ast.Expr)]
    if not trains:
        return []
    on = trains[-1]
    expect = both(eval_at_prediction({line}), runs_clean if batchnorm else (lambda o, f: None))
    return [Candidate(cid, on.lineno, 0.85, [
        ("predict-train-mode", {"line": line, "module": model}),
        ("train-before-predict", {"line": on.lineno, "name": model})],
        [Fix((Edit("delete", on.lineno),), expect, T(
            f"keep `{model}` in evaluation mode while predicting: delete line {on.lineno}, whose "
            "train() switches it back to training mode",
            f"预测时保持 `{model}` 处于评估模式：删除第 {on.lineno} 行，"
            "那里的 train() 把它切回了训练模式"))],
        {"line": on.lineno, "module": model, "model": model, "train_line": on.lineno})]



def _is_training_line(ctx: Ctx, line: int) -> bool:
    backs = {b.line for b in ctx.evidence.backwards}
    stmt = ctx.flow.statement_at(line)
    if stmt is None:
        return False
    if line in backs:
        return True
    loops = ctx.flow.loops_of(stmt)
    return any(any(isinstance(n, ast.Call) and call_name(n) == "backward" for n in ast.walk(lp))
               for lp in loops)



def check_dropout_eval(ctx: Ctx) -> list[Candidate]:
    if ctx.error is not None:
        return []
    # a model with BatchNorm and no Dropout predicting in training mode: another symptom
    return _eval_candidates(ctx, "dropout-no-eval") or _eval_candidates(
        ctx, "batchnorm-no-eval", batchnorm=True)



def check_uncalled(ctx: Ctx) -> list[Candidate]:
    out = []
    for attr, cid in (("backward", "backward-not-called"), ("step", "step-not-called"),
                      ("zero_grad", "step-not-called")):
        for stmt in ctx.flow.uncalled(attr):
            line = stmt.lineno
            edit = replace_in_line(ctx.code, line, rf"\.{attr}\s*$", f".{attr}()")
            expect = backward_runs if attr == "backward" else both(loss_improves, params_learn([]))
            name = text(stmt.value)
            out.append(Candidate(cid, line, 0.9, [("uncalled", {"line": line, "name": name})],
                                 [Fix((edit,), both(expect, loss_improves),
                                      T(f"call it: `{name}()` on line {line}",
                                        f"调用它：第 {line} 行写成 `{name}()`"))] if edit else [],
                                 {"line": line, "name": name}))
    return out



def _loop_with(flow: Flow, name: str) -> list[ast.stmt]:
    loops: list[ast.stmt] = []
    for node in ast.walk(flow.tree):
        if isinstance(node, (ast.For, ast.While)) and any(
                isinstance(n, ast.Call) and call_name(n) == name for n in ast.walk(node)):
            loops.append(node)
    return loops



def check_zero_grad(ctx: Ctx) -> list[Candidate]:
    flow = ctx.flow
    out = []
    for loop in _loop_with(flow, "backward"):
        calls = [n for n in ast.walk(loop) if isinstance(n, ast.Call)]
        names = [call_name(c) for c in calls]
        if any(isinstance(n, ast.For) and n is not loop for n in ast.walk(loop)) and \
                "zero_grad" not in names:
            inner = [n for n in ast.walk(loop) if isinstance(n, (ast.For, ast.While))
                     and n is not loop]
            if inner:
                continue  # the inner loop is checked on its own
        backward = next(c for c in calls if call_name(c) == "backward")
        steps = [c for c in calls if call_name(c) == "step"]
        zeros = [c for c in calls if call_name(c) in ("zero_grad", "zero_")]
        by_hand = _updated_by_hand(loop)
        updates_by_hand = bool(by_hand)
        if not steps and not updates_by_hand:
            continue
        accumulating = [b for b in ctx.evidence.backwards if b.accumulated]
        seen = any(b.accumulated is not None for b in ctx.evidence.backwards)
        if not zeros and seen and not accumulating:
            ctx.refuted.add("missing-zero-grad")  # something else clears them: no bug
            continue
        if not zeros:  # the re-run saw the gradients add up (or could not tell)
            if steps:
                opt = receiver(steps[0]) or "optimizer"
                edit = Edit("insert_before", _first_body_line(loop), f"{opt}.zero_grad()")
            else:
                # after the last update by hand (after its no_grad block): there each .grad
                # exists; before backward() it is None on the first pass
                owners = list(dict.fromkeys(owner for owner, _ in by_hand))
                last = max(stmt.lineno for _, stmt in by_hand)
                stmt = flow.statement_at(last)
                anchor = flow.parents.get(stmt) if stmt is not None else None
                at = anchor.lineno if isinstance(anchor, ast.With) else last
                if isinstance(anchor, ast.With):
                    at = anchor.end_lineno or at
                edit = Edit("insert_after", at, "; ".join(f"{o}.grad.zero_()" for o in owners))
            out.append(Candidate("missing-zero-grad", loop.lineno, 0.75, [
                ("accumulates", {"line": backward.lineno, "count": len(accumulating)}),
                ("no-zero-grad", {"line": loop.lineno}),
            ], [Fix((edit,), both(grads_fresh, loss_improves), T(
                "clear the gradients at every pass: "
                                              f"`{edit.text}`",
                                              f"每次循环都清零梯度：`{edit.text}`"))],
                {"line": loop.lineno, "backward_line": backward.lineno}))
            continue
        if steps and zeros and accumulating:
            out.extend(_zeroes_other(ctx, steps[0], zeros, accumulating))
        if steps and zeros:
            step, zero = steps[0], zeros[0]
            if backward.lineno < zero.lineno < step.lineno:
                ev_zero = [s for s in ctx.evidence.steps if s.n_params and
                           s.grads_zero + s.grads_none == s.n_params]
                conf = 0.9 if ev_zero else 0.7
                out.append(Candidate("zero-grad-misplaced", zero.lineno, conf, [
                    ("zeroed-before-step", {"line": zero.lineno, "count": len(ev_zero)}),
                ], [Fix((Edit("move_before", zero.lineno, to=backward.lineno),),
                        loss_improves, T(f"clear the gradients before backward(): move line "
                                         f"{zero.lineno} above line {backward.lineno}",
                                         f"在 backward() 之前清零梯度：把第 {zero.lineno} 行移到第 "
                                         f"{backward.lineno} 行之前"))], {"line": zero.lineno}))
    return out



def check_cleared_before_step(ctx: Ctx) -> list[Candidate]:
    """The re-run saw a backward() and then a step that found every gradient None or zero:
    something cleared them in between. Read off the steps, so it holds whatever wraps the
    calls (a trainer's method called from a loop: :func:`check_zero_grad` reads loops): the
    ``zero_grad()`` between the backward() and the step in one function moves above the
    backward(), and the change is tried."""
    if ctx.error is not None:
        return []
    flow = ctx.flow
    cleared = [s for s in ctx.evidence.steps if s.n_params and s.passes and s.passes_line and
               s.grads_none + s.grads_zero == s.n_params]
    if not cleared:
        return []
    step_line, back_line = cleared[0].line or 0, cleared[0].passes_line or 0
    step_stmt, back_stmt = flow.statement_at(step_line), flow.statement_at(back_line)
    if step_stmt is None or back_stmt is None or not back_line < step_line:
        return []
    scope = flow.scope_of(step_stmt)
    if flow.scope_of(back_stmt) is not scope or any(
            isinstance(loop, (ast.For, ast.While)) for loop in flow.ancestors(step_stmt)
            if loop in flow.ancestors(back_stmt)):
        return []  # one loop holds both: check_zero_grad reads it
    zeros = [c for c in flow.calls_named("zero_grad", "zero_")
             if back_line < c.lineno < step_line and flow.scope_of(c) is scope]
    out = []
    for zero in zeros[:1]:
        facts: dict[str, object] = {"line": zero.lineno, "count": len(cleared)}
        out.append(Candidate("zero-grad-misplaced", zero.lineno, 0.9, [
            ("zeroed-before-step", facts)],
            [Fix((Edit("move_before", zero.lineno, to=back_line),), parameters_move, T(
                f"clear the gradients before backward(): move line {zero.lineno} above line "
                f"{back_line}", f"在 backward() 之前清零梯度：把第 {zero.lineno} 行移到第 "
                f"{back_line} 行之前"))], {"line": zero.lineno}))
    return out


def _updated_by_hand(loop: ast.stmt) -> list[tuple[str, ast.stmt]]:
    """The tensors a loop updates by hand from their gradients (``w -= lr * w.grad``,
    ``w.data = w.data - lr * w.grad.data``), with the statements that do it."""
    out: list[tuple[str, ast.stmt]] = []
    for node in ast.walk(loop):
        if isinstance(node, ast.AugAssign) and ".grad" in text(node.value):
            out.append((text(node.target).removesuffix(".data"), node))
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                ".grad" in text(node.value) and isinstance(node.targets[0], ast.Attribute) and \
                node.targets[0].attr == "data":
            owner = text(node.targets[0].value)
            if f"{owner}.grad" in text(node.value):
                out.append((owner, node))
    return out


def _zeroes_other(ctx: Ctx, step: ast.Call, zeros: list[ast.Call],
                  accumulating: list[BackwardEvidence]) -> list[Candidate]:
    """The loop clears gradients, yet the re-run saw them add up: what it clears is not what
    the optimizer steps (another model or optimizer's ``zero_grad()``)."""
    opt = receiver(step)
    out = []
    for zero in zeros:
        owner = receiver(zero)
        if not opt or not owner or owner == opt or call_name(zero) != "zero_grad":
            continue
        fix = node_fix(ctx.code, zero.func, f"{opt}.zero_grad", both(grads_fresh, loss_improves),
                       T(f"clear the gradients of what `{opt}` steps: `{opt}.zero_grad()` on "
                         f"line {zero.lineno}",
                         f"清零 `{opt}` 所更新参数的梯度：第 {zero.lineno} 行写成 "
                         f"`{opt}.zero_grad()`"))
        out.append(Candidate("missing-zero-grad", zero.lineno, 0.85, [
            ("accumulates", {"line": accumulating[0].line, "count": len(accumulating)}),
            ("clears-other", {"line": zero.lineno, "name": owner, "optimizer": opt})],
            [fix] if fix else [], {"line": zero.lineno}))
    return out


def check_optimizer_params(ctx: Ctx) -> list[Candidate]:
    """backward() reaches parameters the optimizer does not hold: what it was given was
    rebound afterwards (a model built again, ``w = nn.Parameter(...)``), or it was given
    only part of the model (a submodule, a list that misses some)."""
    ev, flow = ctx.evidence, ctx.flow
    if not ev.steps or not ev.backwards:
        return []
    # a tensor attribute that is not a parameter is another mistake (check_unregistered)
    # a freezing flag set on them (even one that freezes nothing) says they are meant to
    # stay out of the optimizer
    meant_frozen = {n for f in ev.accounting.module_flags if f.value in ("False", "0")
                    for n in f.params}
    # what the program differentiates with respect to (a PINN's coordinates, a gradient
    # penalty's interpolates) requires grad as an input, not as a parameter to train
    inputs = differentiated(flow)
    idle = [p for p in ev.params if p.reached and not p.in_optimizer and p.requires_grad
            and not p.unregistered and not p.held_in and p.name not in meant_frozen
            and p.name not in inputs]
    if not idle:
        return []
    expect = both(params_learn([]), loss_improves)
    out, idle = _held_unstepped(ctx, idle)
    if not idle:
        return out
    # what the optimizers hold trains (the loss reaches it), or none of it is reached
    holds_used = any(p.in_optimizer and p.reached for p in ev.params)
    for stmt, name, call in flow.optimizers():
        name = name or ev.steps[0].optimizer  # built and returned by a method
        given = _given(call)
        holders = list(dict.fromkeys(h for h, _ in given))
        rebound = [(holder, s) for holder in holders
                   for s in _assigned(flow, holder) if s.lineno > stmt.lineno
                   and flow.scope_of(s) is flow.scope_of(stmt)]
        by_helper = [(holder, at, helper) for holder in holders
                     for at, helper in _replaced_by_helper(flow, holder)
                     if at.lineno > stmt.lineno and flow.scope_of(at) is flow.scope_of(stmt)]
        if by_helper and (not rebound or by_helper[-1][1].lineno > rebound[-1][1].lineno):
            holder, again, helper = by_helper[-1]
            line = again.lineno
            out.append(Candidate("optimizer-wrong-params", line, 0.9, [
                ("params-not-in-optimizer", {"params": _names(idle)}),
                ("changed-after-optimizer", {"line": line, "model": holder, "optimizer": name,
                                             "helper": helper}),
            ], [Fix((Edit("move_after", stmt.lineno, to=line),), expect, T(
                f"create `{name}` after `{helper}` gives `{holder}` its new layers: move line "
                f"{stmt.lineno} below line {line}",
                f"在 `{helper}` 给 `{holder}` 换上新层之后再创建 `{name}`：把第 {stmt.lineno} "
                f"行移到第 {line} 行之后"))],
                {"line": line, "model": holder, "optimizer": name, "params": _names(idle)}))
            continue
        if rebound:
            holder, again = rebound[-1]
            line = again.lineno
            if isinstance(again, ast.Assign) and len(again.targets) == 1:
                holder = text(again.targets[0])  # `model.fc` when a layer was replaced
            fixes = [Fix((Edit("move_after", stmt.lineno, to=line),), expect, T(
                f"create `{name}` after `{holder}` is made for the last time: move line "
                f"{stmt.lineno} below line {line}",
                f"在最后一次创建 `{holder}` 之后再创建 `{name}`：把第 {stmt.lineno} 行移到第 "
                f"{line} 行之后"))]
            loops = flow.loops_of(again)
            if loops and not any(loop in flow.loops_of(stmt) for loop in loops) and any(
                    s.lineno < stmt.lineno for s in flow.assignments.get(holder, [])):
                # rebuilt at every pass of a loop, after a first one the optimizer holds:
                # the loop's copy is the one to drop
                fixes.insert(0, Fix((Edit("delete", line),), expect, T(
                    f"keep the `{holder}` the optimizer holds: remove line {line}, which "
                    f"builds a new one at every pass of the loop",
                    f"保留优化器持有的那个 `{holder}`：删除第 {line} 行，"
                    "它在每次循环中都新建一个")))
            out.append(Candidate("optimizer-wrong-params", line, 0.9, [
                ("params-not-in-optimizer", {"params": _names(idle)}),
                ("rebuilt-after-optimizer", {"line": line, "model": holder, "optimizer": name}),
            ], fixes, {"line": line, "model": holder, "optimizer": name,
                       "params": _names(idle)}))
            continue
        # (a critic's loss need not fall once it trains: the left-out parameters moving is
        # what the claim is about)
        twice = _listed_twice(ctx, stmt, call, idle, name,
                              params_learn([p.name for p in idle], most=True))
        if twice is not None:
            out.append(twice)
        missing = _missing_group(ctx, call, idle, name, expect)
        if missing is not None:
            out.append(Candidate("optimizer-wrong-params", missing[0], 0.85, [
                ("params-not-in-optimizer", {"params": _names(idle)}),
                ("optimizer-built", {"line": stmt.lineno, "optimizer": name}),
            ], [missing[1]], {"line": missing[0], "optimizer": name, "params": _names(idle)}))
        fix = _all_parameters(ctx, given, idle, name, expect, call, holds_used)
        line = fix[0] if fix else stmt.lineno
        group = _group_added(ctx, stmt, name, idle)
        # (not pinned: parameters left out can be another mistake's symptom, a target
        # network's copy, a loss weight meant to be fixed; only a change that works says so)
        # where backward() reaches nothing the optimizer holds, what it holds is what the
        # program trains (a leaf it optimizes through a frozen model): a cut on the way
        # explains it first, and adding the model's parameters would train another thing
        out.append(Candidate("optimizer-wrong-params", line, 0.8 if holds_used or fix else 0.6, [
            ("params-not-in-optimizer", {"params": _names(idle)}),
            ("optimizer-built", {"line": line, "optimizer": name}),
        ], [f for f in ([fix[1]] if fix else []) + [group] if f is not None],
            {"line": line, "optimizer": name, "params": _names(idle)}))
    return out


def _held_unstepped(ctx: Ctx, idle: list[ParamEvidence]
                    ) -> tuple[list[Candidate], list[ParamEvidence]]:
    """Of the parameters no stepping optimizer holds, those the program gave an optimizer
    that never steps (a GAN's ``optimizer_d`` whose ``step()`` was left out): the step it
    misses, after the backward() that follows its ``zero_grad()``. Adding them to another
    optimizer would let another loss train them; they are taken out of ``idle``."""
    ev, flow = ctx.evidence, ctx.flow
    stepped = {s.optimizer for s in ev.steps}
    out: list[Candidate] = []
    left = list(idle)
    for stmt, name, call in flow.optimizers():
        if not name or name in stepped:
            continue
        owners = {text(node.func.value) for node in ast.walk(call) if isinstance(node, ast.Call)
                  and isinstance(node.func, ast.Attribute)
                  and node.func.attr in ("parameters", "named_parameters")}
        held = [p for p in left if any(p.name.startswith(f"{o}.") for o in owners)]
        if not held:
            continue
        left = [p for p in left if p not in held]
        clears = sorted(c.lineno for c in flow.calls_named("zero_grad")
                        if receiver(c) == name)
        after = [b.line for b in ev.backwards if clears and b.line > clears[0]]
        backward = flow.statement_at(min(after)) if after else None
        if backward is None or not flow.loops_of(backward) or (
                flow.scope_of(stmt) is not flow.scope_of(backward)
                and name not in flow.visible(backward)):
            continue
        end = backward.end_lineno or backward.lineno
        fill = {"line": backward.lineno, "optimizer": name, "params": _names(held)}
        out.append(Candidate("step-missing", backward.lineno, 0.9, [
            ("params-not-in-optimizer", {"params": _names(held)}),
            ("holder-never-steps", {"line": stmt.lineno, "optimizer": name})],
            [Fix((Edit("insert_after", end, f"{name}.step()"),),
                 params_learn([p.name for p in held], most=True), T(
                f"update what `{name}` holds after its backward(): `{name}.step()` after "
                f"line {end}",
                f"在它的 backward() 之后更新 `{name}` 持有的参数：在第 {end} 行之后调用 "
                f"`{name}.step()`"))], fill))
    return out, left


def _param_expr(name: str) -> str | None:
    """``model[0].weight`` for the evidence's ``model.0.weight``; None for a name that is not
    a path of attributes and indices."""
    parts = name.split(".")
    if not parts or not parts[0].isidentifier():
        return None
    out = parts[0]
    for part in parts[1:]:
        if part.isdigit():
            out += f"[{part}]"
        elif part.isidentifier():
            out += f".{part}"
        else:
            return None
    return out


def _group_added(ctx: Ctx, stmt: ast.stmt, name: str, idle: list[ParamEvidence]) -> Fix | None:
    """The left-out parameters added to the optimizer as a group of their own, right after it
    is built: what param groups assembled by hand missed, without taking any twice."""
    exprs = [e for p in idle[:8] if (e := _param_expr(p.name)) is not None]
    if not exprs or len(exprs) < len(idle[:8]) or not name.replace(".", "").isidentifier():
        return None
    added = f'{name}.add_param_group({{"params": [{", ".join(exprs)}]}})'
    end = stmt.end_lineno or stmt.lineno
    return Fix((Edit("insert_after", end, added),),
               both(params_learn([p.name for p in idle]), loss_improves), T(
        f"give `{name}` the parameters it misses, right after it is built (line {end}): "
        f"`{added}`",
        f"在 `{name}` 建好之后（第 {end} 行）把它缺的参数交给它：`{added}`"))


def differentiated(flow: Flow) -> set[str]:
    """The names given to ``torch.autograd.grad`` as its ``inputs``, and where one is a
    function's parameter, the names its callers pass for it."""
    found: set[str] = set()
    for call in flow.calls_named("grad"):
        func = text(call.func)
        if func != "grad" and not func.endswith("autograd.grad"):
            continue
        given = call.args[1] if len(call.args) > 1 else next(
            (k.value for k in call.keywords if k.arg == "inputs"), None)
        if given is None:
            continue
        for node in given.elts if isinstance(given, (ast.Tuple, ast.List)) else [given]:
            name = text(node)
            found.add(name)
            function = flow.function_at(call.lineno)
            if function is not None and isinstance(node, ast.Name):
                found.update(text(arg) for _, arg in flow.arguments_for(function, name))
    return found


def _assigned(flow: Flow, holder: str) -> list[ast.stmt]:
    """Assignments that give ``holder`` new parameters: of the name itself (a model built
    again), or of one of its layers (``model.fc = nn.Linear(...)``, a head replaced)."""
    found = list(flow.assignments.get(holder, []))
    for name, made in flow.assignments.items():
        if name.startswith(f"{holder}.") and name.count(".") == holder.count(".") + 1:
            found.extend(s for s in made if isinstance(flow.value_of(s), ast.Call))
    return sorted(found, key=lambda s: s.lineno)


def _replaced_by_helper(flow: Flow, holder: str) -> list[tuple[ast.stmt, str]]:
    """The statements that call a function of the program with ``holder`` for a parameter
    whose attributes the function assigns (``model.fc1, model.fc2 = small1, small2``,
    ``setattr(model, name, layer)``): the model gets new layers there, as by an assignment
    in the caller's own code. With the function's name, in call order."""
    found: list[tuple[ast.stmt, str]] = []
    for function in flow.call_graph.functions:
        changed: set[str] = set()
        for node in ast.walk(function):
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets = [t for target in node.targets for t in (
                    target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target])]
            elif isinstance(node, ast.Call) and call_name(node) == "setattr" and node.args:
                targets = [ast.Attribute(value=node.args[0], attr="", ctx=ast.Store())]
            changed |= {t.value.id for t in targets if isinstance(t, ast.Attribute)
                        and isinstance(t.value, ast.Name)
                        and flow.call_graph.parameter(function, t.value.id) is not None}
        for name in changed:
            for call, given in flow.arguments_for(function, name):
                at = flow.statement_of(call)
                if at is not None and text(given) == holder:
                    found.append((at, function.name))
    return sorted(found, key=lambda pair: pair[0].lineno)


def _listed_twice(ctx: Ctx, stmt: ast.stmt, call: ast.Call, idle: list[ParamEvidence],
                  name: str, expect: Expect) -> Candidate | None:
    """An optimizer given the same module's parameters twice (``list(self.d1.parameters()) +
    list(self.d1.parameters())``, which torch warns of) where the loss reaches a sibling
    module's that no optimizer holds (``self.d2``): the second listing was meant to be
    that one. The change tried lists the sibling there instead."""
    given = call.args[0] if call.args else next(
        (k.value for k in call.keywords if k.arg == "params"), None)
    if isinstance(given, ast.Name):  # built on an earlier line of the same scope
        made = [s for s in ctx.flow.assignments.get(given.id, []) if s.lineno < stmt.lineno
                and ctx.flow.scope_of(s) is ctx.flow.scope_of(stmt)]
        given = ctx.flow.value_of(made[-1]) if made else None
    listed = [node for node in ast.walk(given) if isinstance(node, ast.Call) and call_name(
        node) == "parameters" and isinstance(node.func, ast.Attribute) and isinstance(
        node.func.value, ast.Attribute)] if given is not None else []
    listed.sort(key=lambda n: (n.lineno, n.col_offset))
    seen: dict[str, ast.Call] = {}
    for node in listed:
        assert isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Attribute)
        owner = node.func.value
        if text(owner) not in seen:
            seen[text(owner)] = node
            continue
        # model.loss_mpd.net.0.weight -> loss_mpd: the part, by its attribute name
        parts = {p.name.split(".")[1] for p in idle if p.name.count(".") >= 2}
        held = {text(o.func.value).rsplit(".", 1)[-1] for o in listed
                if isinstance(o.func, ast.Attribute)}
        wanted = sorted(parts - held)
        if len(wanted) != 1:
            return None
        meant = f"{text(owner.value)}.{wanted[0]}"
        edit = replace_node(ctx.code, owner, meant)
        if edit is None:
            return None
        facts = {"line": node.lineno, "optimizer": name, "model": text(owner),
                 "target": meant, "params": _names(idle)}
        return Candidate("optimizer-wrong-params", node.lineno, 0.9, [
            ("params-not-in-optimizer", {"params": _names(idle)}),
            ("params-listed-twice", facts)], [Fix((edit,), expect, T(
                f"give `{name}` the parameters of `{meant}` where line {node.lineno} lists "
                f"those of `{text(owner)}` a second time",
                f"第 {node.lineno} 行第二次列出了 `{text(owner)}` 的参数，改为把 `{meant}` "
                f"的参数交给 `{name}`"))], facts, only_if_tried=True)
    return None


def _given(call: ast.Call) -> list[tuple[str, ast.expr]]:
    """What an optimizer is given, as (the name it comes from, the expression): each
    ``x.parameters()`` (also inside param groups) and each tensor of a list."""
    first = call.args[0] if call.args else next(
        (k.value for k in call.keywords if k.arg == "params"), None)
    found: list[tuple[str, ast.expr]] = []
    for node in ast.walk(first) if first is not None else ():
        if isinstance(node, ast.Call) and call_name(node) in ("parameters", "named_parameters"):
            owner = receiver(node)
            if owner:
                found.append((owner.split(".")[0], node))
        elif isinstance(node, (ast.List, ast.Tuple)):
            found.extend((text(e), e) for e in node.elts if isinstance(e, (ast.Name,
                                                                            ast.Attribute)))
    return found


def _missing_group(ctx: Ctx, call: ast.Call, idle: list[ParamEvidence], name: str,
                   expect: Expect) -> tuple[int, Fix] | None:
    """An optimizer built from param groups (``{"params": self.part.parameters()}``, one a
    line) that leaves out one part of the model the loss reaches: the group it misses."""
    first = call.args[0] if call.args else None
    if not isinstance(first, ast.List) or not first.elts or not all(
            isinstance(e, ast.Dict) for e in first.elts):
        return None
    owners: list[str] = []
    for group in first.elts:
        assert isinstance(group, ast.Dict)
        for key, value in zip(group.keys, group.values, strict=True):
            if isinstance(key, ast.Constant) and key.value == "params" and isinstance(
                    value, ast.Call) and call_name(value) == "parameters":
                owners.append(receiver(value) or "")
    prefixes = {o.rsplit(".", 1)[0] for o in owners if "." in o}
    # model.kshot_rw.weight -> kshot_rw: the part of the model, under the name it was seen by
    parts = list(dict.fromkeys(p.name.split(".")[1] for p in idle if p.name.count(".") >= 2))
    last = first.elts[-1]
    if len(prefixes) != 1 or not parts or last.end_lineno == first.lineno or (
            last.lineno != last.end_lineno):
        return None
    prefix = prefixes.pop()
    wanted = [f"{prefix}.{part}" for part in parts if f"{prefix}.{part}" not in owners]
    if not wanted:
        return None
    added = " ".join(f'{{"params": {part}.parameters()}},' for part in wanted)
    line = last.end_lineno or last.lineno
    return line, Fix((Edit("insert_after", line, added),), expect, T(
        f"give `{name}` the parameters it leaves out: add `{added}` after line {line}",
        f"把漏掉的参数交给 `{name}`：在第 {line} 行之后加上 `{added}`"))


def _all_parameters(ctx: Ctx, given: list[tuple[str, ast.expr]], idle: list[ParamEvidence],
                    name: str, expect: Expect, call: ast.Call, holds_used: bool
                    ) -> tuple[int, Fix] | None:
    """Give the optimizer every parameter of the model the idle ones belong to; when they
    belong to another module or tensor than the ones it was given (a learned loss weight, a
    second network), give it those as well."""
    owners = list(dict.fromkeys(p.name.split(".")[0] for p in idle if "." in p.name))
    bare = [p.name for p in idle if "." not in p.name and p.name != "?"]
    parts = [node for _, node in given if isinstance(node, ast.Call)]
    if "?" in owners or not (owners or bare):
        return None
    # what it holds trains (the loss reaches it): the idle ones are to be added to it; what
    # it holds is never reached (``holds_used`` False): it was given another model than
    # the loss uses
    if parts and len(owners) == 1 and not bare and (
            owners[0] in {o for o, _ in given} or not holds_used):
        owner = owners[0]
        edit = replace_node(ctx.code, parts[0], f"{owner}.parameters()")
        if edit is None:
            return None
        return edit.line, Fix((edit,), expect, T(
            f"give `{name}` all the parameters of `{owner}`, the model the loss uses: "
            f"`{owner}.parameters()` on line {edit.line}",
            f"把 `{owner}`（损失所用的模型）的全部参数交给 `{name}`：第 {edit.line} 行写成 "
            f"`{owner}.parameters()`"))
    if not holds_used:
        return None
    return _added_parameters(ctx, call, owners, bare, name, params_learn([p.name for p in idle]))


def _added_parameters(ctx: Ctx, call: ast.Call, owners: list[str], bare: list[str], name: str,
                      expect: Expect) -> tuple[int, Fix] | None:
    """The optimizer's parameters with the left-out modules' and tensors' appended: ``[*E,
    *awl.parameters(), w]`` for what it was given ``E``; a param-group list gets a group."""
    first = call.args[0] if call.args else next(
        (k.value for k in call.keywords if k.arg == "params"), None)
    if first is None:
        return None
    more = [f"*{o}.parameters()" for o in owners] + bare
    if isinstance(first, ast.List) and first.elts and all(
            isinstance(e, ast.Dict) for e in first.elts):
        more = [f'{{"params": [{", ".join(more)}]}}']
        new = "[" + ", ".join([*(text(e) for e in first.elts), *more]) + "]"
    elif isinstance(first, (ast.List, ast.Tuple)):
        new = "[" + ", ".join([*(text(e) for e in first.elts), *more]) + "]"
    else:
        new = "[" + ", ".join([f"*{text(first)}", *more]) + "]"
    edit = replace_node(ctx.code, first, new)
    if edit is None:
        return None
    left_out = ", ".join(f"`{o}`" for o in [*owners, *bare])
    return edit.line, Fix((edit,), expect, T(
        f"give `{name}` the parameters of {left_out} too: the loss uses them, but `{name}` "
        f"was given only the others, so nothing updates them (line {edit.line})",
        f"把 {left_out} 的参数也交给 `{name}`：损失用到了它们，但 `{name}` 只拿到了其他参数，"
        f"所以没有任何东西更新它们（第 {edit.line} 行）"))


def _names(params: list[ParamEvidence]) -> str | None:
    """The parameters as the re-run named them (the first four); None when it could name
    none."""
    named = list(dict.fromkeys(p.name for p in params if p.name and p.name != "?"))
    return ", ".join(f"`{n}`" for n in named[:4]) or None



def check_requires_grad_late(ctx: Ctx) -> list[Candidate]:
    out = []
    for op in ctx.evidence.ops:
        if op.kind == "requires_grad" and op.first_use is not None and op.first_use < op.line \
                and op.name:
            name = op.name
            made = ctx.flow.assigned_before(name, op.first_use + 1)
            fixes = []
            if made is not None:
                fixes.append(Fix((Edit("move_before", op.line, to=made.lineno + 1),),
                                 runs_clean_with_grad(name),
                                 T(f"turn on requires_grad right after `{name}` is created: move "
                                   f"line {op.line} below line {made.lineno}",
                                   f"在创建 `{name}` 之后立即开启 requires_grad："
                                   f"把第 {op.line} 行移到"
                                   f"第 {made.lineno} 行之后")))
            out.append(Candidate("requires-grad-after-use", op.line, 0.85, [
                ("used-before", {"line": op.first_use, "name": name}),
                ("flag-set", {"line": op.line, "name": name}),
            ], fixes, {"line": op.line, "name": name, "first_use": op.first_use}))
    return out



def check_graph_cut_silent(ctx: Ctx) -> list[Candidate]:
    """Parameters that require grad never change while the others train: an op on the way
    to the loss (``.data``, ``.detach()``, ``.item()`` and back, argmax) cut them out."""
    ev = ctx.evidence
    if ctx.error is not None or not ev.backwards:
        return []
    # something was trained or updated, yet these stayed as they were
    updated = any(p.changed for p in ev.params) or bool(ev.steps) or any(
        o.kind == "inplace" and "under no_grad" in o.detail for o in ev.ops)
    idle = [p for p in ev.params if p.requires_grad and p.changed is False
            and (not p.reached or updated)]
    if not idle:
        return _python_cut_in_loss(ctx)
    unreached = any(not p.reached for p in idle)
    idle_names = {p.name for p in idle} | {p.name.split(".")[-1] for p in idle}
    # what an optimizer was given is what the program trains: a model it only runs (a
    # frozen feature extractor) need not learn once the cut is gone
    focus = [p for p in idle if p.in_optimizer]
    if updated and focus and len(focus) < len(idle) and not any(p.reached for p in focus):
        # no backward() reached what it trains: the change must make it reach them, and
        # they must learn (a loss that barely moves in a short run says nothing)
        names = [p.name for p in focus]
        expect = both(params_learn(names), params_reached(names))
    else:
        expect = both(params_learn([p.name for p in idle]), loss_improves) if updated \
            else params_reached([p.name for p in idle if not p.reached])
    out = []
    switched_off = _run_without_grad(ev, idle)
    for op in ev.ops:
        if op.kind == "cut" and op.detail == "no_grad":
            if op.line not in switched_off:
                continue  # evaluation, a target network: gradients off on purpose
            switched_off.discard(op.line)  # one candidate for the line's ops
        elif op.kind not in ("data", "cut") or op.detail not in ("", "nondifferentiable",
                                                                 "python"):
            continue
        if op.line in {b.line for b in ev.backwards}:
            continue
        if not unreached and (op.name or "") not in idle_names:
            continue  # reached but idle: only a cut of that very tensor explains it
        reason = "data" if op.kind == "data" else op.detail
        out.append(Candidate("graph-cut-silent", op.line, 0.8, [
            ("params-idle", {"params": _names(idle)}),
            (CUT_STEP.get(reason, "cut-op"), {"line": op.line, "op": op.op}),
        ], cut_fixes(ctx, op.line, reason, op.op, expect),
            {"line": op.line, "op": op.op, "params": _names(idle)}))
    return out


def _run_without_grad(ev: Evidence, idle: list[ParamEvidence]) -> set[int]:
    """The lines where a module whose parameters an optimizer holds, and no backward()
    reaches, ran with gradients off, for modules that never ran with them on: the learner
    means to train it (it is given to an optimizer), and ``no_grad`` keeps it out of every
    graph. A module also run with gradients on (a DQN's target computed under no_grad) is
    not one."""
    names = [p.name for p in idle if p.in_optimizer and not p.reached]
    runs: dict[str, list[ModuleCallEvidence]] = {}
    for call in ev.modules:
        runs.setdefault(call.module, []).append(call)
    lines: set[int] = set()
    for module, calls in runs.items():
        if any(n.startswith(module + ".") for n in names) and not any(
                c.grad_enabled for c in calls):
            lines |= {c.line for c in calls}
    return lines


def _python_cut_in_loss(ctx: Ctx) -> list[Candidate]:
    """A term of the loss turned into a Python number and back: it adds to the value but
    passes no gradient (the loss still has a graph through its other terms)."""
    out = []
    for op in ctx.evidence.ops:
        if op.kind == "cut" and op.detail == "nondifferentiable" and op.op in REBUILDS:
            out.extend(_rebuilt_from_tensors(ctx, op.line, op.op))
            continue
        if op.kind != "cut" or op.detail != "python":
            continue
        trip = round_trip(ctx, op.line, None, cut_gone(op.line))
        if trip is None:
            continue
        line, fixes = trip
        out.append(Candidate("graph-cut-silent", line, 0.7, [
            (CUT_STEP["python"], {"line": op.line, "op": op.op})],
            fixes, {"line": line, "op": op.op, "params": T("this term", "这一项")}))
    return out


REBUILDS = ("tensor", "as_tensor", "Tensor", "FloatTensor")


def _rebuilt_from_tensors(ctx: Ctx, line: int, op: str) -> list[Candidate]:
    """``torch.tensor(list of tensors that require grad)``: a new tensor from their values,
    with no graph back to them; ``torch.stack`` keeps it."""
    calls = [c for c in ctx.flow.calls if c.lineno == line and call_name(c) == op and c.args]
    if not calls:
        return []
    new = f"torch.stack({text(calls[0].args[0])})"
    fix = node_fix(ctx.code, calls[0], new, cut_gone(line), T(
        f"stack the tensors instead of copying their values on line {line}: `{new}`",
        f"第 {line} 行把这些张量 stack 起来，而不是复制它们的数值：`{new}`"))
    return [Candidate("graph-cut-silent", line, 0.75, [
        (CUT_STEP["nondifferentiable"], {"line": line, "op": f"torch.{op}"})],
        [fix] if fix else [], {"line": line, "op": f"torch.{op}"})]


def _freezes(stmt: ast.stmt) -> bool:
    """``p.requires_grad = False`` or ``model.requires_grad_(False)``."""
    if isinstance(stmt, ast.Assign):
        return any(text(t).endswith("requires_grad") for t in stmt.targets) and isinstance(
            stmt.value, ast.Constant) and stmt.value.value is False
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    return isinstance(call, ast.Call) and call_name(call) == "requires_grad_" and bool(
        call.args) and isinstance(call.args[0], ast.Constant) and call.args[0].value is False


def _not_learning(ctx: Ctx) -> bool:
    """The symptom a frozen parameter must explain: nothing that trains changes, or the loss
    does not go down."""
    ev = ctx.evidence
    ls = losses(ctx.result)
    return not any(p.changed for p in ev.params if p.requires_grad) or (
        len(ls) >= 2 and ls[-1] > ls[0] * 0.9)


def _looks_at(ctx: Ctx, params: list[ParamEvidence]) -> bool:
    """The program reads the ``.grad`` of one of these parameters, or prints one: the
    learner expects it to learn."""
    names = {p.name for p in params}
    looked = {text(n.value) for n in ast.walk(ctx.flow.tree)
              if isinstance(n, ast.Attribute) and n.attr == "grad"}
    looked |= {text(a) for c in ctx.flow.calls if call_name(c) == "print" for a in c.args}
    return any(seen in names or any(n.endswith("." + seen) for n in names)
               for seen in looked if "." in seen)


def check_frozen(ctx: Ctx) -> list[Candidate]:
    ev, flow = ctx.evidence, ctx.flow
    if ctx.error is not None:
        return []
    frozen = [p for p in ev.params if not p.requires_grad and not p.changed]
    if not frozen or not (_not_learning(ctx) or _looks_at(ctx, frozen)):
        return []  # frozen on purpose (a fine-tuned head, LoRA) while the rest learns
    out = []
    for stmt in flow.statements:
        if _freezes(stmt):
            loop = flow.parents.get(stmt)
            line = loop.lineno if isinstance(loop, ast.For) else stmt.lineno
            edits = (Edit("delete", stmt.lineno), Edit("delete", loop.lineno)) if isinstance(
                loop, ast.For) and len(loop.body) == 1 else (Edit("delete", stmt.lineno),)
            out.append(Candidate("frozen-params", line, 0.7, [
                ("frozen-idle", {"params": _names(frozen), "line": line})],
                [Fix(edits, params_learn([p.name for p in frozen]),
                     T(f"do not freeze these parameters (line {line})",
                       f"不要冻结这些参数（第 {line} 行）"))],
                {"line": line, "params": _names(frozen)}))
    return out



SOFTMAXES = ("softmax", "Softmax")



def check_softmax_ce(ctx: Ctx) -> list[Candidate]:
    """A softmax before a loss that takes logits (CrossEntropyLoss) or log-probabilities
    (NLLLoss)."""
    flow = ctx.flow
    used = {call_name(c) for c in flow.calls}
    if not used & {"cross_entropy", "nll_loss", "CrossEntropyLoss", "NLLLoss"}:
        return []
    nll = bool(used & {"nll_loss", "NLLLoss"}) and not used & {"cross_entropy",
                                                              "CrossEntropyLoss"}
    criterion = "NLLLoss" if nll else "CrossEntropyLoss"
    first = losses(ctx.result)
    out = []
    for call in flow.calls:
        if call_name(call) not in SOFTMAXES or "log_softmax" in flow.line(call.lineno):
            continue
        line = call.lineno
        if not _in_loss_history(ctx, call, ("softmax", "_softmax")):
            continue
        edit = _softmax_edit(ctx, call, nll)
        fixes = [Fix((edit,), loss_improves, T(
            f"{'use log_softmax' if nll else 'give the loss the raw scores (logits)'} on line "
            f"{line}: `{edit.text.strip()}`",
            f"第 {line} 行{'改用 log_softmax' if nll else '把原始分数（logits）交给损失'}："
            f"`{edit.text.strip()}`"))] if edit else []
        out.append(Candidate("softmax-before-nll" if nll else "softmax-before-ce", line, 0.85, [
            ("softmax-then-loss", {"line": line, "criterion": criterion}),
            ("loss-stays", {"loss_first": f"{first[0]:.4g}" if first else None,
                            "loss_last": f"{first[-1]:.4g}" if first else None}),
        ], fixes, {"line": line, "criterion": criterion}))
    return out


def _in_loss_history(ctx: Ctx, call: ast.Call, ops: tuple[str, ...]) -> bool:
    """Whether the loss was computed through this call: the re-run's history of the loss
    holds one of ``ops`` on its line (a layer's op runs on the line that calls the model)."""
    if not ctx.evidence.backwards:
        return True  # nothing to tell by
    chained = [link for b in ctx.evidence.backwards for link in b.chain]
    lines = {link.line for link in chained if link.op in ops}
    return bool(lines) and (call_name(call)[:1].isupper() or call.lineno in lines)


def _softmax_edit(ctx: Ctx, call: ast.Call, nll: bool) -> Edit | None:
    """NLLLoss: the log of it (``log_softmax``, ``nn.LogSoftmax``); CrossEntropyLoss: the
    scores themselves (the softmax's input, or the Sequential without its Softmax layer)."""
    code = ctx.code
    if nll:
        func = call.func
        new_name = "LogSoftmax" if call_name(call) == "Softmax" else "log_softmax"
        return replace_node(code, func, text(func)[: -len(call_name(call))] + new_name)
    return _drop_activation(ctx, call)


def _drop_activation(ctx: Ctx, call: ast.Call) -> Edit | None:
    """The activation taken away: its input instead of ``f(x)`` or ``x.f()``, or the
    ``Sequential`` without that layer."""
    code = ctx.code
    owner = receiver(call)
    if call_name(call)[:1].isupper():  # a layer: nn.Softmax(dim=1), nn.Sigmoid()
        parent = ctx.flow.parents.get(call)
        if isinstance(parent, ast.Call) and call_name(parent) == "Sequential" and \
                call in parent.args:
            rest = ast.Call(parent.func, [a for a in parent.args if a is not call],
                            parent.keywords)
            return replace_node(code, parent, ast.unparse(rest))
        return None
    if owner is not None and owner not in ("torch", "F", "nn.functional", "functional"):
        return replace_node(code, call, owner)  # scores.softmax(dim=1)
    return replace_node(code, call, text(call.args[0])) if call.args else None


def check_double_sigmoid(ctx: Ctx) -> list[Candidate]:
    flow = ctx.flow
    if not any("BCEWithLogits" in line or "binary_cross_entropy_with_logits" in line
               for line in flow.lines):
        return []
    out = []
    for call in flow.calls:
        if call_name(call) in ("sigmoid", "Sigmoid") and _in_loss_history(
                ctx, call, ("sigmoid", "sigmoid_")):
            line = call.lineno
            e = _drop_activation(ctx, call)
            out.append(Candidate("double-sigmoid", line, 0.8, [
                ("sigmoid-then-logits-loss", {"line": line})],
                [Fix((e,), loss_improves, T(f"feed the logits to BCEWithLogitsLoss: "
                                            f"`{e.text.strip()}`",
                                            "把 logits 交给 BCEWithLogitsLoss："
                                            f"`{e.text.strip()}`"))]
                if e else [], {"line": line}))
    return out


CLIPPERS = ("clip_grad_norm_", "clip_grad_value_", "clip_grad_norm", "clip_grad_value")


def _step_size_suspects(ctx: Ctx) -> list[tuple[str, dict[str, object]]]:
    """What in the training loop, besides the learning rate, sets how far a step goes: a
    loss that diverges then does not say the learning rate is the cause. Gradient clipping
    (which does nothing in the wrong place or on the wrong parameters), a backward() given a
    gradient to weigh the loss by, gradients that add up across passes."""
    found: list[tuple[str, dict[str, object]]] = []
    own = {f.name for f in ast.walk(ctx.flow.tree) if isinstance(f, ast.FunctionDef)}
    for call in ctx.flow.calls:
        name = call_name(call)
        if name in CLIPPERS or ("clip" in name.lower() and name in own):
            found.append(("clip-grads", {"line": call.lineno, "op": text(call.func)}))
        elif name == "backward" and (call.args or any(k.arg == "gradient"
                                                      for k in call.keywords)):
            found.append(("backward-weighted", {"line": call.lineno}))
    adding = [b for b in ctx.evidence.backwards if b.accumulated]
    if adding:
        found.append(("accumulates", {"line": adding[0].line, "count": len(adding)}))
    return found


def _diverges(ls: list[float], raw: Sequence[float | str | None]) -> Text | None:
    """How the loss fails to fall, when it does: nan/inf, growing, or swinging up and down
    without getting lower."""
    if any(isinstance(v, str) for v in raw):
        return T("become nan/inf", "变成 nan/inf")
    if len(ls) >= 4 and ls[-1] > ls[0] * 1.5:
        return T("grow", "变大")
    ups = sum(1 for a, b in itertools.pairwise(ls) if b > a)
    if len(ls) >= 6 and ups >= (len(ls) - 1) * 0.4 and not ls[-1] < ls[0] * 0.5:
        return T("oscillate", "振荡")
    return None


def check_lr(ctx: Ctx) -> list[Candidate]:
    """A learning rate too large: only on positive evidence. The re-run's loss diverges, a
    smaller rate tried in the sandbox makes it fall steadily, and nothing else in the loop
    sets the step size; where something else does, the diagnosis says less (the loss does
    not fall, and what to check), not a specific cause that may be wrong."""
    ls = losses(ctx.result)
    ev = ctx.evidence
    raw = [b.loss for b in ev.backwards]
    if len(raw) < 4 or (not ev.steps and not any(
            isinstance(n, ast.AugAssign) for n in ast.walk(ctx.flow.tree))):
        return []
    shape = _diverges(ls, raw)
    if shape is None or not ls:
        return []
    flow = ctx.flow
    suspects = _step_size_suspects(ctx)
    last = raw[-1]
    seen = {"loss_first": f"{ls[0]:.4g}",
            "loss_last": last if isinstance(last, str) else f"{last:.4g}", "detail": shape}
    out = []
    # the numbers that set the step size, wherever the program writes them (an optimizer's
    # lr, the factor of .grad in a hand-written update, through names, calls and defaults)
    for number in flow.step_sizes():
        value = float(number.value) if isinstance(number.value, (int, float)) else 0.0
        written = text(number)
        if value <= 0:
            continue
        line = number.lineno
        fixes = []
        for factor in (100, 1000):
            new = f"{value / factor:g}"
            e = replace_node(ctx.code, number, new)
            if e:
                fixes.append(Fix((e,), all_of(loss_improves, loss_falls_steadily),
                                 T(f"lower the learning rate on line {line} to {new}",
                                   f"把第 {line} 行的学习率降到 {new}")))
        fill = {"line": line, "lr": written, **seen}
        steps = [("loss-diverges", seen), ("lr-set", {"line": line, "lr": written})]
        if suspects:
            out.append(Candidate("loss-not-falling", line, 0.4, [*steps, *suspects], fixes,
                                 fill))
        else:
            out.append(Candidate("lr-too-high", line, 0.6, steps, fixes, fill))
    return out


def check_broadcast(ctx: Ctx) -> list[Candidate]:
    out = []
    for w in ctx.result.warnings:
        m = re.search(r"Using a target size \(torch\.Size\(\[([^\]]*)\]\)\) that is different "
                      r"to the input size \(torch\.Size\(\[([^\]]*)\]\)\)", w.message)
        if not m or w.line is None:
            continue
        line = w.line
        call = _stmt_call(ctx.flow, line, "mse_loss", "l1_loss", "criterion", "loss_fn",
                          "loss_func", "loss", "smooth_l1_loss")
        if call is None:
            stmt = ctx.flow.statement_at(line)
            call = next((n for n in ast.walk(stmt) if isinstance(n, ast.Call)
                         and len(n.args) == 2), None) if stmt is not None else None
        fixes = []
        if call is not None and len(call.args) == 2:
            a, b = text(call.args[0]), text(call.args[1])
            for new_b in (f"{b}.view_as({a})",):
                e = replace_in_line(ctx.code, line, re.escape(b) + r"(?=\s*\))", new_b)
                if e:
                    fixes.append(Fix((e,), no_broadcast_warning,
                                     T(f"give the target the prediction's shape: `{new_b}`",
                                       f"让目标与预测形状相同：`{new_b}`")))
        out.append(Candidate("loss-target-broadcast", line, 0.8, [
            ("broadcast-warning", {"line": line, "shape": f"({m.group(2)})",
                                   "target_shape": f"({m.group(1)})"})],
            fixes, {"line": line, "shape": f"({m.group(2)})", "target_shape": f"({m.group(1)})"}))
    return out


EXCEPTION_CHECKS: tuple[Check, ...] = ()
SILENT_CHECKS: tuple[Check, ...] = (check_uncalled, check_zero_grad, check_cleared_before_step,
                                    check_optimizer_params,
                                    check_requires_grad_late, check_graph_cut_silent, check_frozen,
                                    check_softmax_ce, check_double_sigmoid, check_dropout_eval,
                                    check_lr, check_broadcast)

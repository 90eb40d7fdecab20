"""The learning rate the optimizer really used, read off the re-run's steps: a schedule that
drives it to almost nothing within the training the program runs leaves the weights where
they are, silently. The change tried is the one that follows from where the scheduler's
``step()`` sits: inside the batch loop of an epoch loop, it counts batches where its
``step_size``, ``T_max`` or milestones count epochs, so it is moved out of the batch loop."""

from __future__ import annotations

import ast

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import Edit, Expect, Fix, node_fix
from tutor.diagnosis.flow import Flow, call_name, receiver, text
from tutor.diagnosis.verify import loss_improves, runs_clean
from tutor.i18n import T, Text
from tutor.sandbox.models import RunResult

COLLAPSE = 0.01
"""The learning rate counts as gone when it falls below this fraction of its first value."""
EARLY = 0.8
"""...before this share of the recorded steps: a schedule that ends near zero at the end of
training (cosine annealing sized in batches) is meant to."""
PER_BATCH = frozenset({"OneCycleLR", "CyclicLR"})
"""Schedulers made to be stepped at every batch."""


def learning_rates(result: RunResult) -> list[float]:
    """The learning rate of each recorded optimizer step of the run."""
    ev = result.evidence
    return [s.lr for s in ev.steps if s.lr is not None] if ev is not None else []


def _collapsed(rates: list[float]) -> bool:
    if len(rates) < 3 or rates[0] <= 0:
        return False
    gone = next((i for i, r in enumerate(rates) if r <= rates[0] * COLLAPSE), None)
    return gone is not None and gone < len(rates) * EARLY


def rate_holds(original: RunResult, fixed: RunResult) -> Text | None:
    """The fixed program's learning rate stays above the collapse, and its loss falls by
    more than it did."""
    after, before = learning_rates(fixed), learning_rates(original)
    if fixed.outcome != "ok" or len(after) < 3 or _collapsed(after):
        return None
    falls = loss_improves(original, fixed)
    if falls is None:
        return None
    return T(f"with this change the learning rate goes from {after[0]:.3g} to {after[-1]:.3g} "
             f"over the recorded steps (before: {before[0]:.3g} to {before[-1]:.3g}); "
             f"{falls.en}",
             f"改动后学习率在记录的步骤中从 {after[0]:.3g} 变为 {after[-1]:.3g}"
             f"（改动前：{before[0]:.3g} 到 {before[-1]:.3g}）；{falls.zh}")


def _schedulers(flow: Flow) -> set[str]:
    """Names given a learning-rate scheduler (``torch.optim.lr_scheduler.StepLR(...)``)."""
    names = set()
    for name, stmts in flow.assignments.items():
        for stmt in stmts:
            value = flow.value_of(stmt)
            if isinstance(value, ast.Call) and call_name(value) not in PER_BATCH and (
                    "lr_scheduler" in text(value.func)
                    or (call_name(value) or "").endswith(("LR", "Scheduler", "OnPlateau"))):
                names.add(name)
    return names


def check_lr_collapse(ctx: Ctx) -> list[Candidate]:
    ev, flow = ctx.evidence, ctx.flow
    rates = [s.lr for s in ev.steps if s.lr is not None]
    if ctx.error is not None or not _collapsed(rates):
        return []
    low = min(rates)
    at = next(i for i, r in enumerate(rates) if r == low) + 1
    schedulers = _schedulers(flow)
    out = []
    for call in flow.calls:
        if call_name(call) != "step" or receiver(call) not in schedulers:
            continue
        stmt = flow.statement_at(call.lineno)
        loops = flow.loops_of(stmt) if stmt is not None else []
        if stmt is None or len(loops) < 2:
            continue
        fix = _out_of_batch_loop(ctx, stmt, loops[0], rate_holds)
        name = receiver(call)
        out.append(Candidate("lr-schedule-collapse", stmt.lineno, 0.8, [
            ("lr-collapsed", {"lr": f"{rates[0]:.3g}", "detail": f"{low:.3g}",
                              "count": at}),
            ("scheduler-per-batch", {"line": stmt.lineno, "name": name,
                                     "train_line": loops[0].lineno}),
        ], [fix] if fix is not None else [], {"line": stmt.lineno, "name": name,
                                              "lr": f"{rates[0]:.3g}",
                                              "detail": f"{low:.3g}"}))
    return out


def _out_of_batch_loop(ctx: Ctx, stmt: ast.stmt, inner: ast.stmt, expect: Expect
                       ) -> Fix | None:
    """``stmt`` moved from the batch loop ``inner`` to right after it, in the epoch loop."""
    lines = ctx.code.splitlines()
    body = getattr(inner, "body", [])
    rest = [s for s in body if s is not stmt]
    if not rest or stmt.end_lineno != stmt.lineno or getattr(inner, "orelse", None):
        return None
    last = max(s.end_lineno or s.lineno for s in rest)
    if last < stmt.lineno and (inner.end_lineno or 0) > stmt.lineno:
        return None  # something after it in the loop spans it: not a plain statement list
    end = (inner.end_lineno or inner.lineno) if last > stmt.lineno else last
    indent = lines[inner.lineno - 1][: len(lines[inner.lineno - 1]) -
                                     len(lines[inner.lineno - 1].lstrip())]
    moved = f"{lines[end - 1]}\n{indent}{lines[stmt.lineno - 1].strip()}"
    return Fix((Edit("replace", end, moved), Edit("delete", stmt.lineno)), expect, T(
        f"step the scheduler once per epoch: move line {stmt.lineno} out of the batch loop "
        f"of line {inner.lineno}, to after it",
        f"每个 epoch 只调用一次调度器的 step：把第 {stmt.lineno} 行移出第 {inner.lineno} 行的 "
        "batch 循环，放到循环之后"))


def check_resumed_without_initial_lr(ctx: Ctx) -> list[Candidate]:
    """``KeyError: 'initial_lr'``: a scheduler given ``last_epoch=`` (an epoch to resume
    from) over an optimizer that never ran under a scheduler, as on a fresh run with
    ``last_epoch=0``. ``last_epoch`` is the index of the last epoch done, -1 for none: the
    count of epochs done minus one is tried, then the argument left out."""
    if ctx.error is None or ctx.error.type != "KeyError" or "initial_lr" not in ctx.message:
        return []
    line, stmt = ctx.failing_statement()
    if stmt is None:
        return []
    for call in (n for n in ast.walk(stmt) if isinstance(n, ast.Call)):
        given = next((k for k in call.keywords if k.arg == "last_epoch"), None)
        if given is None:
            continue
        shown = text(given.value)
        minus = f"{shown} - 1" if not isinstance(given.value, ast.Constant) else str(
            given.value.value - 1) if isinstance(given.value.value, int) else None
        counted = node_fix(ctx.code, given.value, minus, runs_clean, T(
            f"give `last_epoch` the index of the last epoch done, -1 on a fresh run: "
            f"`last_epoch={minus}` (line {given.value.lineno})",
            f"`last_epoch` 应是已完成的最后一个 epoch 的序号，新训练时为 -1："
            f"`last_epoch={minus}`（第 {given.value.lineno} 行）")) if minus else None
        fixes = [counted] if counted is not None else []
        edit = _without_keyword(ctx.code, call, given)
        loaded = _state_loaded_after(ctx, stmt, call)
        if loaded is not None:
            # the program resumes: the optimizer's saved state (with its `initial_lr`)
            # is loaded after the scheduler is built; building it after the load is the
            # fix, and dropping `last_epoch` would restart the schedule
            fixes, edit = [_built_after(ctx, stmt, loaded)], None
        if edit is not None:
            fixes.append(Fix((edit,), runs_clean, T(
                f"leave `last_epoch` out on line {given.lineno}: a fresh run starts the "
                "schedule itself", f"第 {given.lineno} 行去掉 `last_epoch`：新训练时调度器"
                "自己从头开始")))
        fill: dict[str, object] = {"line": given.lineno, "name": shown,
                                   "op": call_name(call) or text(call.func), "fail_line": line}
        if loaded is not None:
            fill.update(train_line=loaded.lineno, optimizer=text(call.args[0]))
            return [Candidate("scheduler-built-before-resume", stmt.lineno, 0.9,
                              [("state-loaded-after", fill)], fixes, fill)]
        return [Candidate("scheduler-resumed-fresh", given.lineno, 0.85,
                          [("last-epoch-given", fill)], fixes, fill)]
    return []


def _state_loaded_after(ctx: Ctx, stmt: ast.stmt, call: ast.Call) -> ast.stmt | None:
    """The statement after the scheduler's, in its block, that loads its optimizer's state
    (``optimizer.load_state_dict(...)``, alone or inside an ``if``)."""
    if not call.args:
        return None
    optimizer = text(call.args[0])
    holder = ctx.flow.parents.get(stmt)
    body = next((b for b in (getattr(holder, f, None) for f in ("body", "orelse"))
                 if isinstance(b, list) and stmt in b), None)
    if body is None:
        return None
    for later in body[body.index(stmt) + 1:]:
        if any(isinstance(n, ast.Call) and call_name(n) == "load_state_dict" and isinstance(
                n.func, ast.Attribute) and text(n.func.value) == optimizer
               for n in ast.walk(later)):
            return later
    return None


def _built_after(ctx: Ctx, stmt: ast.stmt, loaded: ast.stmt) -> Fix:
    """The scheduler's statement moved to just after the one that loads the state."""
    lines = ctx.code.splitlines()
    first, last = stmt.lineno, stmt.end_lineno or stmt.lineno
    end = loaded.end_lineno or loaded.lineno
    moved = "\n".join(lines[first - 1:last])
    edits = (*(Edit("delete", n) for n in range(first, last + 1)),
             Edit("replace", end, f"{lines[end - 1]}\n{moved}"))
    return Fix(edits, runs_clean, T(
        f"build the scheduler (line {first}) after the optimizer's state is loaded (line "
        f"{loaded.lineno}): the saved state holds the `initial_lr` it resumes from",
        f"在加载优化器状态（第 {loaded.lineno} 行）之后再创建调度器（第 {first} 行）：保存的状态里"
        "有它恢复时要读取的 `initial_lr`"))


def _without_keyword(code: str, call: ast.Call, keyword: ast.keyword) -> Edit | None:
    """The call's lines with one keyword argument taken out (a call on one line, or the
    keyword alone at the end of its own line)."""
    lines = code.splitlines()
    row = lines[keyword.lineno - 1]
    start, end = keyword.col_offset, keyword.end_col_offset or 0
    if keyword.lineno != keyword.end_lineno:
        return None
    before = row[:start].rstrip()
    after = row[end:]
    if before.endswith(","):
        new = before[:-1] + after
    elif after.lstrip().startswith(","):
        new = before + after.lstrip()[1:].lstrip()
    else:
        return None
    if not new.strip():
        return Edit("delete", keyword.lineno)
    return Edit("replace", keyword.lineno, new)


def _last_rate(result: RunResult) -> float | None:
    rates = learning_rates(result)
    return rates[-1] if rates else None


def schedule_keeps_pace(original: RunResult, fixed: RunResult) -> Text | None:
    """The fixed run's learning rate at its last recorded step is higher than it was: the
    schedule no longer runs ahead of the optimizer's steps."""
    before, after = _last_rate(original), _last_rate(fixed)
    if fixed.outcome != "ok" or before is None or after is None or not after > before:
        return None
    return T(f"with this change the schedule moves with the optimizer's steps: the learning "
             f"rate at the last recorded step is {after:.3g} (before: {before:.3g})",
             f"改动后调度与优化器的 step 同步：记录到的最后一步学习率为 {after:.3g}"
             f"（改动前：{before:.3g}）")


def check_scheduler_outpaces_optimizer(ctx: Ctx) -> list[Candidate]:
    """A scheduler's ``step()`` every pass of a loop whose optimizer steps only on a
    condition (every k micro-batches): the schedule advances k times per optimizer step and
    runs out k times too early. The change tried moves it under the optimizer's condition,
    right after its step."""
    flow = ctx.flow
    if ctx.error is not None:
        return []
    schedulers = _schedulers(flow)
    for call in flow.calls:
        if call_name(call) != "step" or receiver(call) not in schedulers:
            continue
        stmt = flow.statement_at(call.lineno)
        loops = flow.loops_of(stmt) if stmt is not None else []
        if stmt is None or not loops or stmt.lineno != stmt.end_lineno:
            continue
        for opt_call in flow.calls_named("step"):
            if receiver(opt_call) in schedulers:
                continue
            opt_stmt = flow.statement_at(opt_call.lineno)
            branch = next((a for a in flow.ancestors(opt_stmt) if isinstance(a, ast.If)),
                          None) if opt_stmt is not None else None
            if opt_stmt is None or branch is None or loops[0] not in flow.ancestors(branch) \
                    or branch in flow.ancestors(stmt):
                continue
            name = receiver(call) or ""
            facts: dict[str, object] = {"line": stmt.lineno, "name": name,
                                        "optimizer": receiver(opt_call) or "",
                                        "train_line": opt_call.lineno,
                                        "detail": text(branch.test)}
            return [Candidate("scheduler-outpaces-optimizer", stmt.lineno, 0.85, [
                ("scheduler-every-pass", facts)], [Fix(
                    (Edit("move_after", stmt.lineno, to=opt_stmt.lineno),), schedule_keeps_pace,
                    T(f"step `{name}` only when the optimizer steps: move line {stmt.lineno} "
                      f"under `if {text(branch.test)}:`, after line {opt_stmt.lineno}",
                      f"只在优化器 step 时让 `{name}` step：把第 {stmt.lineno} 行移到 "
                      f"`if {text(branch.test)}:` 里、第 {opt_stmt.lineno} 行之后"))], facts)]
    return []


HORIZONS = {"CosineAnnealingLR": ("T_max", 1), "LinearLR": ("total_iters", 3),
            "PolynomialLR": ("total_iters", 1), "ConstantLR": ("total_iters", 2)}
"""Schedulers sized by the number of their steps: the keyword and the position of that size."""
HARDLY = 0.5
"""A schedule that has hardly begun: the learning rate at the last step still above this
share of its first value."""


def _horizon(call: ast.Call) -> ast.expr | None:
    found = HORIZONS.get(call_name(call) or "")
    if found is None:
        return None
    key, at = found
    given = next((k.value for k in call.keywords if k.arg == key), None)
    return given if given is not None else (call.args[at] if len(call.args) > at else None)


def _whole_last(result: RunResult) -> float | None:
    """The learning rate at the run's last step (after the fully recorded ones too)."""
    rates = result.evidence.training.rates if result.evidence is not None else []
    return rates[-1] if rates else None


def rate_ends_below(share: float, words: Text) -> Expect:
    """The fixed run's learning rate at its last step is below ``share`` of the original's;
    ``words`` says what that shows, before the two rates."""
    def expect(original: RunResult, fixed: RunResult) -> Text | None:
        before, after = _whole_last(original), _whole_last(fixed)
        if fixed.outcome != "ok" or before is None or after is None or \
                not after < before * share:
            return None
        return T(f"{words.en}: the learning rate at the last recorded step is {after:.3g} "
                 f"(before: {before:.3g})",
                 f"{words.zh}：记录到的最后一步学习率为 {after:.3g}（改动前：{before:.3g}）")
    return expect


schedule_advances = rate_ends_below(0.9, T("with this change the schedule advances with the "
                                           "batches", "改动后调度随 batch 推进"))
schedule_reaches_end = rate_ends_below(0.5, T("with this change the schedule runs its course "
                                              "over the training", "改动后调度在训练中走完全程"))


def check_horizon_in_batches(ctx: Ctx) -> list[Candidate]:
    """A scheduler sized in batches (``T_max=len(loader) * epochs``) stepped once per epoch,
    outside the loop over that loader: by the end of training it has taken a fraction of its
    steps, and the learning rate hardly moved. The change tried steps it with the optimizer,
    inside the batch loop."""
    flow = ctx.flow
    rates = ctx.evidence.training.rates
    if ctx.error is not None or len(rates) < 2 or ctx.evidence.training.step_calls < 3 or \
            rates[0] <= 0 or rates[-1] < rates[0] * HARDLY:
        return []
    batch_loops = {_last(text(walked)): loop for loop in ast.walk(flow.tree)
                   if isinstance(loop, ast.For) and (walked := _iterated(loop)) is not None}
    for name in _schedulers(flow):
        made = [flow.value_of(stmt) for stmt in flow.assignments.get(name, [])]
        call = next((m for m in made if isinstance(m, ast.Call) and _horizon(m) is not None),
                    None)
        size = _horizon(call) if call is not None else None
        counted = [_last(text(n.args[0])) for n in ast.walk(size) if isinstance(n, ast.Call)
                   and call_name(n) == "len" and n.args] if size is not None else []
        loop = next((batch_loops[c] for c in counted if c in batch_loops), None)
        if call is None or loop is None or size is None:
            continue
        steps = [c for c in flow.calls if call_name(c) == "step" and receiver(c) == name]
        stmt = flow.statement_at(steps[0].lineno) if len(steps) == 1 else None
        if stmt is None or loop in flow.ancestors(stmt) or not flow.loops_of(stmt):
            continue
        inner = [c for c in flow.calls if call_name(c) == "step" and receiver(c) != name
                 and loop in flow.ancestors(c)]
        opt_stmt = flow.statement_at(inner[-1].lineno) if inner else None
        facts: dict[str, object] = {"line": call.lineno, "name": name, "expr": text(size),
                                    "train_line": stmt.lineno, "lr": f"{rates[0]:.3g}",
                                    "detail": f"{rates[-1]:.3g}"}
        fixes = []
        epochs = next((lp.iter.args[-1] for lp in flow.loops_of(stmt) if isinstance(lp, ast.For)
                       and isinstance(lp.iter, ast.Call) and call_name(lp.iter) == "range"
                       and lp.iter.args), None)
        sized = node_fix(ctx.code, size, text(epochs), schedule_reaches_end, T(
            f"size `{name}` in epochs, as it is stepped: `{text(epochs)}` on line "
            f"{size.lineno}", f"按 epoch 设定 `{name}` 的长度，与它的调用方式一致：第 "
            f"{size.lineno} 行写 `{text(epochs)}`")) if epochs is not None else None
        if sized is not None:
            fixes.append(sized)
        if opt_stmt is not None and isinstance(flow.parents.get(stmt), (ast.For, ast.While)):
            fixes.append(Fix((Edit("move_after", stmt.lineno, to=opt_stmt.lineno),),
                             schedule_advances, T(
                f"step `{name}` with the optimizer, once per batch: move line "
                f"{stmt.lineno} to after line {opt_stmt.lineno}",
                f"让 `{name}` 随优化器每个 batch step 一次：把第 {stmt.lineno} 行移到第 "
                f"{opt_stmt.lineno} 行之后")))
        return [Candidate("schedule-sized-in-batches", call.lineno, 0.8, [
            ("schedule-hardly-moved", facts)], fixes, facts)]
    return []


def _last(name: str) -> str:
    """``train_loader`` for ``self.train_loader``."""
    return name.rsplit(".", 1)[-1]


def _iterated(loop: ast.For) -> ast.expr | None:
    """What a for loop walks: ``loader`` in ``for x, y in loader`` and in
    ``for i, (x, y) in enumerate(loader)``."""
    it = loop.iter
    if isinstance(it, ast.Call) and call_name(it) == "enumerate" and it.args:
        it = it.args[0]
    return it if isinstance(it, (ast.Name, ast.Attribute)) else None


def check_lr_lambda_number(ctx: Ctx) -> list[Candidate]:
    """``lr_lambda=0.95``: LambdaLR and MultiplicativeLR take a function of the epoch ("should
    be a function, but got float"). MultiplicativeLR multiplies the rate by what it returns
    each epoch, so the number becomes ``lambda epoch: 0.95``; LambdaLR multiplies the initial
    rate by it, so a decay by that factor each epoch is ``lambda epoch: 0.95 ** epoch``."""
    # (LambdaLR calls it while it is built: "'float' object is not callable")
    if ctx.error is None or not ("lr_lambda should be a function" in ctx.message
                                 or "object is not callable" in ctx.message):
        return []
    functions = {n.name for n in ast.walk(ctx.flow.tree) if isinstance(
        n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    line, stmt = ctx.failing_statement()
    for node in ast.walk(stmt) if stmt is not None else ():
        if not isinstance(node, ast.Call) or call_name(node) not in ("LambdaLR",
                                                                     "MultiplicativeLR"):
            continue
        given = next((k.value for k in node.keywords if k.arg == "lr_lambda"),
                     node.args[1] if len(node.args) > 1 else None)
        if not isinstance(given, (ast.Constant, ast.Name)) or (
                isinstance(given, ast.Name) and given.id in functions):
            continue  # a function (a lambda, a def) is what it takes
        kind = call_name(node) or ""
        new = f"lambda epoch: {text(given)}" if kind == "MultiplicativeLR" else \
            f"lambda epoch: {text(given)} ** epoch"
        fill: dict[str, object] = {"line": line, "name": kind, "given": text(given),
                                   "new": new}
        fix = node_fix(ctx.code, given, new, runs_clean, T(
            f"give `{kind}` a function of the epoch on line {line}: `lr_lambda={new}`",
            f"第 {line} 行给 `{kind}` 传入以 epoch 为参数的函数：`lr_lambda={new}`"))
        return [Candidate("lr-lambda-not-function", line, 0.9, [("lr-lambda-number", fill)],
                          [fix] if fix is not None else [], fill)]
    return []


EXCEPTION_CHECKS: tuple[Check, ...] = (check_resumed_without_initial_lr, check_lr_lambda_number)
SILENT_CHECKS: tuple[Check, ...] = (check_lr_collapse, check_scheduler_outpaces_optimizer,
                                    check_horizon_in_batches)

"""Checks that reason over evidence: what the instrumented re-run saw, joined with the source's
data flow. Each check proposes candidate root causes (the line that causes the problem, which
may differ from the failing line), the chain of evidence that leads there, and concrete fixes
to try. The list of silent-bug checks comes from the real programs of the diagnosis corpus.
"""

from __future__ import annotations

import ast
import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from tutor.diagnosis.fixes import Edit, Fix, apply, indent_of, losses, replace_in_line
from tutor.diagnosis.flow import Flow, call_name, receiver, target_names, text
from tutor.i18n import T, Text
from tutor.sandbox.models import ErrorInfo, Evidence, RunResult


@dataclass
class Candidate:
    id: str
    root_line: int
    confidence: float
    steps: list[tuple[str, dict[str, object]]] = field(default_factory=list)
    fixes: list[Fix] = field(default_factory=list)
    fill: dict[str, object] = field(default_factory=dict)
    tell_apart: Text | None = None


@dataclass
class Ctx:
    code: str
    flow: Flow
    result: RunResult  # the instrumented re-run
    evidence: Evidence
    error: ErrorInfo | None

    @property
    def message(self) -> str:
        return self.error.message if self.error is not None else ""

    @property
    def fail_line(self) -> int | None:
        if self.error is None:
            return None
        frames = self.error.traceback
        return frames[-1].line if frames else self.error.line

    def trace_lines(self) -> list[int]:
        return [f.line for f in self.error.traceback] if self.error else []


# -- what a fixed run must show --------------------------------------------------------
def runs_clean(original: RunResult, fixed: RunResult) -> Text | None:
    if fixed.outcome != "ok":
        return None
    grads = _grad_summary(fixed)
    return T("with this change your program runs to the end" + (f"; {grads[0]}" if grads else ""),
             "改动后程序能完整运行" + (f"；{grads[1]}" if grads else ""))


def _grad_summary(result: RunResult) -> tuple[str, str] | None:
    ev = result.evidence
    if ev is None or not ev.params:
        return None
    got = [p.name for p in ev.params if not p.grad_none][:3]
    if not got:
        return None
    names = ", ".join(f"`{n}`" for n in got)
    return f"{names} now get a gradient", f"{names} 现在得到了梯度"


def _drop(values: list[float]) -> float:
    return (values[0] - values[-1]) / abs(values[0]) if values and values[0] else 0.0


def loss_improves(original: RunResult, fixed: RunResult) -> Text | None:
    """The fixed program's loss falls, and by more than it did before the change."""
    before, after = losses(original), losses(fixed)
    if fixed.outcome != "ok" or len(after) < 2:
        return None
    if not all(abs(v) < float("inf") for v in after) or any(
            isinstance(b.loss, str) for b in (fixed.evidence.backwards if fixed.evidence else [])):
        return None
    raw_before = [b.loss for b in original.evidence.backwards] if original.evidence else []
    broken_before = any(isinstance(v, str) for v in raw_before)
    if _drop(after) >= 0.1 and (broken_before or len(before) < 2
                                or _drop(after) > _drop(before) + 0.05):
        return T(f"with this change the loss falls from {after[0]:.4g} to {after[-1]:.4g}"
                 + (f" (before the change: {before[0]:.4g} to {before[-1]:.4g})"
                    if len(before) >= 2 else ""),
                 f"改动后损失从 {after[0]:.4g} 降到 {after[-1]:.4g}"
                 + (f"（改动前：{before[0]:.4g} 到 {before[-1]:.4g}）" if len(before) >= 2 else ""))
    return None


def params_learn(names: list[str]) -> Callable[[RunResult, RunResult], Text | None]:
    def expect(original: RunResult, fixed: RunResult) -> Text | None:
        ev = fixed.evidence
        if fixed.outcome != "ok" or ev is None:
            return None
        wanted = [p for p in ev.params if p.name in names] if names else ev.params
        if not wanted or not all(p.changed for p in wanted if p.requires_grad):
            return None
        shown = ", ".join(f"`{p.name}`" for p in wanted[:3])
        return T(f"with this change {shown} are updated by training",
                 f"改动后 {shown} 会在训练中被更新")
    return expect


def backward_runs(original: RunResult, fixed: RunResult) -> Text | None:
    ev = fixed.evidence
    if fixed.outcome != "ok" or ev is None or not ev.backwards:
        return None
    got = [p.name for p in ev.params if not p.grad_none][:3]
    shown = ", ".join(f"`{n}`" for n in got) or "the parameters"
    return T(f"with this change backward() runs and {shown} get gradients",
             f"改动后 backward() 会执行，{shown} 得到梯度")


def eval_at_prediction(lines: set[int]) -> Callable[[RunResult, RunResult], Text | None]:
    def expect(original: RunResult, fixed: RunResult) -> Text | None:
        ev = fixed.evidence
        if fixed.outcome != "ok" or ev is None:
            return None
        calls = [m for m in ev.modules if m.dropout or m.batchnorm]
        late = [m for m in calls if not m.grad_enabled or not ev.backwards
                or (m.after_backward and not m.training)]
        if late and all(not m.training for m in late):
            return T("with this change the model predicts in eval mode (Dropout and "
                     "BatchNorm switched to inference)",
                     "改动后模型在 eval 模式下预测（Dropout 与 BatchNorm 处于推理状态）")
        return None
    return expect


def both(*expects: Callable[[RunResult, RunResult], Text | None]
         ) -> Callable[[RunResult, RunResult], Text | None]:
    def expect(original: RunResult, fixed: RunResult) -> Text | None:
        for e in expects:
            got = e(original, fixed)
            if got is not None:
                return got
        return None
    return expect


# -- helpers -----------------------------------------------------------------------------
def _stmt_call(flow: Flow, line: int, *names: str) -> ast.Call | None:
    stmt = flow.statement_at(line)
    if stmt is None:
        return None
    return next((n for n in ast.walk(stmt) if isinstance(n, ast.Call) and call_name(n) in names),
                None)


def _backward_calls(flow: Flow) -> list[ast.Call]:
    return flow.calls_named("backward")


def _wrap_no_grad(code: str, line: int) -> tuple[Edit, ...]:
    lines = code.splitlines()
    original = lines[line - 1]
    return (Edit("replace", line, indent_of(original) + "with torch.no_grad():\n"
                 + indent_of(original) + "    " + original.strip()),)


# -- exceptions --------------------------------------------------------------------------
def check_backward_twice(ctx: Ctx) -> list[Candidate]:
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
    fills = {"fail_line": fail, "name": target or "the loss"}
    # 1. a state carried from one pass to the next (h = f(x, h)) keeps the old graph
    for loop in loops:
        for sub in ast.walk(loop):
            if (isinstance(sub, ast.Assign) and sub.lineno < fail) or (isinstance(sub, ast.Assign) \
                    and sub.lineno <= fail):
                assigned = [n for t in sub.targets for n in target_names(t)]
                used = flow.names_in(sub.value)
                carried = [n for n in assigned if n in used]
                if carried:
                    detach = "; ".join(f"{n} = {n}.detach()" for n in carried)
                    fix = Fix((Edit("insert_before", sub.lineno, detach),), runs_clean,
                              T(f"detach the carried state before line {sub.lineno}: `{detach}`",
                                f"在第 {sub.lineno} 行之前截断传递的状态：`{detach}`"))
                    out.append(Candidate("backward-twice", sub.lineno, 0.9, [
                        ("backward-raised", fills),
                        ("carried-state", {"line": sub.lineno, "name": ", ".join(carried)}),
                    ], [fix], {"name": ", ".join(carried), "line": sub.lineno}))
        break
    # 2. a value the loop differentiates was built before the loop
    if loops and target:
        loop = loops[0]
        for line in sorted(flow.slice_lines(target, fail)):
            inner = flow.statement_at(line)
            names = [n for t in getattr(inner, "targets", []) for n in target_names(t)]
            in_loop = any(s.lineno > loop.lineno and loop in flow.ancestors(s)
                          for n in names for s in flow.assignments.get(n, []))
            if inner is not None and loop not in flow.ancestors(inner) and line < loop.lineno \
                    and _depends_on_grad(flow, inner) and not in_loop:
                fix = Fix((Edit("move_before", line, to=_first_body_line(loop)),), runs_clean,
                          T(f"move line {line} into the loop so each pass builds its own graph",
                            f"把第 {line} 行移到循环内，让每次循环都构建自己的计算图"))
                out.append(Candidate("backward-twice-loop", line, 0.85, [
                    ("backward-raised", fills),
                    ("built-outside-loop", {"line": line, "name": target}),
                ], [fix], {"line": line, "name": target}))
    # 3. two backward passes through one graph in straight-line code
    if (len(backs) >= 2 and not loops) or (len(set(backs)) >= 2 and backs[-1] != backs[0]):
        prev = [b for b in backs if b != fail]
        prev_line = prev[-1] if prev else first_back
        fixes = []
        edit = replace_in_line(ctx.code, prev_line, r"\.backward\(\)",
                               ".backward(retain_graph=True)")
        if edit is not None:
            fixes.append(Fix((edit,), runs_clean,
                             T(f"keep the graph for the second pass: `backward(retain_graph=True)` "
                               f"on line {prev_line}",
                               f"为第二次反向传播保留计算图：第 {prev_line} 行使用 "
                               "`backward(retain_graph=True)`")))
        out.append(Candidate("backward-twice", prev_line, 0.6, [
            ("backward-raised", fills), ("first-backward", {"line": prev_line}),
        ], fixes, {"line": prev_line}))
    # 4. the second pass reuses a forward output computed before the first backward
    if call is not None:
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
    return out


def _first_body_line(loop: ast.AST) -> int:
    body = getattr(loop, "body", [])
    return body[0].lineno if body else loop.lineno + 1


def _depends_on_grad(flow: Flow, stmt: ast.stmt) -> bool:
    """A computed tensor, not a constant, a layer, an optimizer or fresh data."""
    value = flow.value_of(stmt)
    if not isinstance(value, (ast.Call, ast.BinOp, ast.Subscript)):
        return False
    if isinstance(value, ast.Call):
        name = call_name(value)
        if name[:1].isupper() or name in ("randn", "rand", "zeros", "ones", "tensor",
                                            "randint", "linspace", "arange", "empty"):
            return False
    return True


CUT_STEP = {"data": "cut-data", "no_grad": "cut-no-grad", "nondifferentiable": "cut-op",
            "python": "cut-python", "new": "cut-new"}


def check_lost_graph(ctx: Ctx) -> list[Candidate]:
    if "does not require grad and does not have a grad_fn" not in ctx.message:
        return []
    flow, code = ctx.flow, ctx.code
    failed = next((b for b in reversed(ctx.evidence.backwards) if b.raised), None)
    out: list[Candidate] = []
    fills = {"fail_line": ctx.fail_line or 0, "name": failed.name if failed else "the loss"}
    steps: list[tuple[str, dict[str, object]]] = [("no-graph", fills)]
    chain = failed.chain if failed is not None else []
    cut = next((c for c in chain if (c.cut and c.cut != "new") or (c.inputs_rg and
                c.requires_grad is False)), None)
    notable_cuts = [o for o in ctx.evidence.ops if o.kind in ("cut", "data")]
    frozen_ops = [o for o in ctx.evidence.ops if o.kind == "requires_grad"
                  and o.requires_grad is False]
    if cut is None and frozen_ops:
        cut_line = 0
    elif cut is None and chain and chain[-1].cut == "new":
        # rebuilt from values: look for a Python-number cut feeding that line
        new_line = chain[-1].line
        cut_op = next((o for o in notable_cuts if o.line <= new_line), None)
        if cut_op is not None:
            cut_line, reason, op = cut_op.line, "python", cut_op.op
        else:
            cut_line, reason, op = new_line, "new", chain[-1].op
    elif cut is not None:
        reason = cut.cut or ("no_grad" if not cut.grad_enabled else "nondifferentiable")
        cut_line, op = cut.line, cut.op
    else:
        cut_line, reason, op = 0, "", ""
    if cut_line and reason == "no_grad":
        stmt = flow.statement_at(cut_line)
        block = flow.in_no_grad(stmt) if stmt is not None else None
        if block is not None:
            cut_line = block.lineno
        else:
            deco = _no_grad_decorator(flow, cut_line)
            cut_line = deco or cut_line
    if cut_line:
        steps.append((CUT_STEP.get(reason, "cut-op"), {"line": cut_line, "op": op}))
        fixes = _cut_fixes(ctx, cut_line, reason, op)
        cid = {"no_grad": "no-grad-fn-no-grad-block", "data": "no-grad-fn-detached",
               "python": "no-grad-fn-python-number"}.get(reason, "no-grad-fn-detached" if
                                                         op == "detach" else "no-grad-fn")
        out.append(Candidate(cid, cut_line, 0.85, steps, fixes, {"line": cut_line, "op": op}))
        return out
    # nothing on the way required grad: the leaves never asked for it, or were frozen
    frozen = [s for s in flow.statements if isinstance(s, ast.Assign)
              and any(text(t).endswith(".requires_grad") for t in s.targets)
              and isinstance(s.value, ast.Constant) and s.value.value is False]
    if frozen:
        line = frozen[0].lineno
        steps.append(("frozen", {"line": line}))
        out.append(Candidate("no-grad-fn-frozen", line, 0.8, steps, [
            Fix((Edit("delete", line),) if not isinstance(flow.parents.get(frozen[0]), ast.For)
                else (Edit("delete", flow.parents[frozen[0]].lineno), Edit("delete", line)),
                runs_clean, T(f"do not freeze the parameters on line {line}",
                              f"不要在第 {line} 行冻结参数"))], {"line": line}))
        return out
    leaf = chain[-1] if chain else None
    if leaf is not None and leaf.requires_grad is False:
        line = leaf.line
        steps.append(("leaf-no-grad", {"line": line, "op": leaf.op}))
        edit = replace_in_line(code, line, r"\)\s*$", ", requires_grad=True)")
        fixes = [Fix((edit,), runs_clean,
                     T(f"create the tensor on line {line} with `requires_grad=True`",
                       f"在第 {line} 行创建张量时加上 `requires_grad=True`"))] if edit else []
        out.append(Candidate("no-grad-fn-no-leaf", line, 0.7, steps, fixes, {"line": line}))
    return out


def _no_grad_decorator(flow: Flow, line: int) -> int | None:
    for node in flow.statements:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                node.lineno <= line <= (node.end_lineno or 0):
            for deco in node.decorator_list:
                if "no_grad" in text(deco):
                    return deco.lineno
    return None


def _cut_fixes(ctx: Ctx, line: int, reason: str, op: str) -> list[Fix]:
    code, flow = ctx.code, ctx.flow
    fixes: list[Fix] = []

    def add(edit: Edit | None, en: str, zh: str) -> None:
        if edit is not None:
            fixes.append(Fix((edit,), backward_runs, T(en, zh)))

    if reason == "data":
        add(replace_in_line(code, line, r"\.data\b", ""), f"use the tensor itself, not `.data`, on "
            f"line {line}", f"在第 {line} 行使用张量本身，而不是 `.data`")
    if op == "detach" or reason == "nondifferentiable":
        add(replace_in_line(code, line, r"\.detach\(\)", ""), f"remove `.detach()` on line {line}",
            f"删除第 {line} 行的 `.detach()`")
    if reason == "python":
        add(replace_in_line(code, line, r"torch\.tensor\((.*)\.item\(\)\)", r"\1"),
            f"keep the tensor on line {line} instead of a Python number",
            f"在第 {line} 行保留张量，而不是转成 Python 数字")
        add(replace_in_line(code, line, r"\.item\(\)", ""), f"keep the tensor on line {line} "
            "(no `.item()`)", f"在第 {line} 行保留张量（不用 `.item()`）")
    if reason == "no_grad":
        stmt = flow.statement_at(line)
        block = stmt if isinstance(stmt, ast.With) else (
            flow.in_no_grad(stmt) if stmt is not None else None)
        if block is not None:
            fixes.append(Fix((Edit("dedent_block", block.lineno),), backward_runs,
                             T(f"compute it outside the `torch.no_grad()` block of line "
                               f"{block.lineno}",
                               f"在第 {block.lineno} 行的 `torch.no_grad()` 块之外计算它")))
        for deco in flow.statements:
            if isinstance(deco, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for d in deco.decorator_list:
                    if "no_grad" in text(d) and (d.lineno == line or
                                                  deco.lineno <= line <= (deco.end_lineno or 0)):
                        fixes.append(Fix((Edit("delete", d.lineno),), backward_runs,
                                         T(f"remove the `@torch.no_grad()` decorator on line "
                                           f"{d.lineno}",
                                           f"删除第 {d.lineno} 行的 `@torch.no_grad()` 装饰器")))
    return fixes


INPLACE_REWRITES = [
    (r"^(\s*)([\w.\[\]]+)\s*([+\-*/])=\s*(.+)$", r"\1\2 = \2 \3 \4"),
    (r"^(\s*)([\w.]+)\.(add|sub|mul|div|clamp|pow)_\((.*)\)\s*$", r"\1\2 = \2.\3(\4)"),
    (r"inplace\s*=\s*True", "inplace=False"),
]


def check_inplace_saved(ctx: Ctx) -> list[Candidate]:
    if "modified by an inplace operation" not in ctx.message:
        return []
    m = re.search(r"output \d+ of (\w+)", ctx.message)
    made_by = m.group(1) if m else None
    inplace = [o for o in ctx.evidence.ops if o.kind == "inplace"]
    hits = [o for o in inplace if made_by and o.grad_fn and (
        o.grad_fn == made_by or o.grad_fn.startswith(made_by + "Backward"))] or (
        [] if made_by else inplace)
    out: list[Candidate] = []
    fills = {"fail_line": ctx.fail_line or 0}
    for op in hits[-2:]:
        fixes = _inplace_fixes(ctx, op.line)
        out.append(Candidate("inplace-modified-output", op.line, 0.85, [
            ("inplace-failed", fills),
            ("inplace-op", {"line": op.line, "op": op.op, "name": op.name or "a tensor",
                            "detail": made_by or "?"}),
        ], fixes, {"line": op.line, "op": op.op, "name": op.name or "?"}))
    if not made_by:
        # a leaf (a weight) changed in place between forward and backward: an optimizer step
        steps = [s for s in ctx.evidence.steps if s.line is not None]
        if steps:
            line = steps[0].line or 0
            out.append(Candidate("inplace-modified-input", line, 0.7, [
                ("inplace-failed", fills), ("step-between", {"line": line}),
            ], [Fix((Edit("delete", line),), runs_clean,
                    T(f"call every backward() before optimizer.step(): remove the step on line "
                      f"{line}", f"先完成所有 backward() 再调用 step()：删除第 {line} 行的 step"))],
                {"line": line}))
    return sorted(out, key=lambda c: -c.root_line)


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
    if "leaf Variable that requires grad is being used in an in-place" not in ctx.message:
        return []
    line = ctx.fail_line or 0
    cid = "leaf-view-inplace" if "a view of a leaf" in ctx.message else "leaf-inplace"
    stmt = ctx.flow.statement_at(line)
    uses_grad = stmt is not None and ".grad" in text(stmt)
    if uses_grad:
        cid = "leaf-inplace-update"
    fixes = [Fix(_wrap_no_grad(ctx.code, line), runs_clean,
                 T(f"do the change on line {line} under `with torch.no_grad():`",
                   f"把第 {line} 行的修改放进 `with torch.no_grad():`"))]
    for pattern, repl in INPLACE_REWRITES[:1]:
        edit = replace_in_line(ctx.code, line, pattern, repl)
        if edit is not None and not uses_grad:
            fixes.append(Fix((edit,), runs_clean,
                             T(f"make line {line} out of place: `{edit.text.strip()}`",
                               f"把第 {line} 行改为非原地运算：`{edit.text.strip()}`")))
    return [Candidate(cid, line, 0.8, [("leaf-inplace", {"line": line})], fixes, {"line": line})]


def check_non_scalar(ctx: Ctx) -> list[Candidate]:
    if "only for scalar outputs" not in ctx.message:
        return []
    flow, line = ctx.flow, ctx.fail_line or 0
    failed = next((b for b in reversed(ctx.evidence.backwards) if b.raised), None)
    shape = tuple(failed.shape) if failed and failed.shape is not None else None
    steps: list[tuple[str, dict[str, object]]] = [
        ("non-scalar", {"line": line, "shape": str(shape) if shape else "?"})]
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
    line = ctx.fail_line or 0
    edit = replace_in_line(ctx.code, line, r"\.numpy\(\)", ".detach().numpy()")
    fixes = [Fix((edit,), runs_clean, T(f"detach before converting on line {line}",
                                        f"在第 {line} 行转换前先 detach"))] if edit else []
    return [Candidate("numpy-requires-grad", line, 0.85, [("numpy", {"line": line})], fixes,
                      {"line": line})]


def check_linear_shape(ctx: Ctx) -> list[Candidate]:
    m = re.search(r"mat1 and mat2 shapes cannot be multiplied \((\d+)x(\d+) and (\d+)x(\d+)\)",
                  ctx.message)
    if not m:
        return []
    got, expected = int(m.group(2)), int(m.group(3))
    flow, fail = ctx.flow, ctx.fail_line or 0
    out = []
    name = None
    stmt_fail = flow.statement_at(fail)
    if stmt_fail is not None:
        for node in ast.walk(stmt_fail):
            if isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute)):
                callee = text(node.func)
                short = callee.split(".")[-1]
                if any(isinstance(s2, ast.Assign) and "Linear" in text(s2.value) and any(
                        text(t).split(".")[-1] == short for t in s2.targets)
                       for s2 in flow.statements):
                    name = callee
                    break
    if name is None:
        module = next((mc for mc in ctx.evidence.modules if mc.line in ctx.trace_lines()
                       and mc.kind == "Linear"), None)
        name = module.module if module else None
    if name:
        short = name.split(".")[-1]
        for stmt in flow.statements:
            if isinstance(stmt, ast.Assign) and any(text(t).split(".")[-1] == short
                                                    for t in stmt.targets) \
                    and "Linear" in text(stmt.value):
                line = stmt.lineno
                edit = replace_in_line(ctx.code, line, r"Linear\(\s*[^,()]+(\([^)]*\))?[^,()]*,",
                                       f"Linear({got},")
                fixes = [Fix((edit,), runs_clean,
                             T(f"give `{short}` {got} input features on line {line}",
                               f"在第 {line} 行让 `{short}` 接收 {got} 个输入特征"))
                         ] if edit else []
                out.append(Candidate("linear-in-features", line, 0.8, [
                    ("shape-mismatch", {"fail_line": fail, "shape": f"{got}",
                                        "target_shape": f"{expected}"}),
                    ("layer-defined", {"line": line, "module": short}),
                ], fixes, {"line": line, "module": short}))
                return out
    edit = replace_in_line(ctx.code, fail, r"mm\((\w+),\s*(\w+)\)", r"mm(\1, \2.T)")
    if edit is not None:
        out.append(Candidate("mm-shape-mismatch", fail, 0.6, [
            ("shape-mismatch", {"fail_line": fail, "shape": f"{got}",
                                "target_shape": f"{expected}"})],
            [Fix((edit,), runs_clean, T(f"transpose the second operand on line {fail}",
                                        f"在第 {fail} 行转置第二个操作数"))], {"line": fail}))
    return out


DTYPE_MSG = re.compile(r"(expected scalar type \w+ but found \w+|must have the same dtype|"
                       r"expected m1 and m2 to have the same dtype)")
MAKERS = ("from_numpy", "as_tensor", "tensor", "randint", "arange")


def check_dtype(ctx: Ctx) -> list[Candidate]:
    if not DTYPE_MSG.search(ctx.message):
        return []
    flow, fail = ctx.flow, ctx.fail_line or 0
    lines = [fail, *ctx.trace_lines()]
    names: set[str] = set()
    for line in lines:
        stmt = flow.statement_at(line)
        if stmt is not None:
            names |= flow.names_in(stmt)
    candidates = []
    for name in names:
        stmt = flow.assigned_before(name, max(lines) + 1)
        if stmt is None:
            continue
        value = flow.value_of(stmt)
        if value is None:
            continue
        src = text(value)
        if "from_numpy(" in src or "as_tensor(" in src or "float64" in src or \
                "double" in src or (any(f"{m}(" in src for m in MAKERS) and (
                    "np." in src or "numpy" in src or "long" in src or "randint" in src)):
            candidates.append((stmt, name))
    out = []
    for stmt, name in sorted(candidates, key=lambda p: p[0].lineno):
        line = stmt.lineno
        edit = replace_in_line(ctx.code, line, r"\s*$", ".float()") if "float64" not in \
            flow.line(line) else replace_in_line(ctx.code, line, r"torch\.float64", "torch.float32")
        fixes = [Fix((edit,), runs_clean, T(f"make `{name}` float32 where it is created (line "
                                            f"{line})", f"在创建 `{name}` 的第 {line} 行把它转为 "
                                            "float32"))] if edit else []
        out.append(Candidate("dtype-mismatch", line, 0.7, [
            ("dtype", {"fail_line": fail}), ("made-here", {"line": line, "name": name})],
            fixes, {"line": line, "name": name}))
    return out


def check_ce_target(ctx: Ctx) -> list[Candidate]:
    msg = ctx.message
    flow, fail = ctx.flow, ctx.fail_line or 0
    if "expected target dtype to be Long" in msg or "0D or 1D target tensor expected" in msg:
        cid, conv = "ce-target-dtype", ".long()"
    elif re.search(r"Target -?\d+ is out of bounds", msg):
        cid, conv = "ce-target-out-of-bounds", None
    elif "to match target batch_size" in msg:
        cid, conv = "ce-batch-mismatch", None
    else:
        return []
    out = []
    stmt = flow.statement_at(fail)
    names = flow.names_in(stmt) if stmt is not None else set()
    for line in [fail, *ctx.trace_lines()]:
        st = flow.statement_at(line)
        if st is not None:
            names |= flow.names_in(st)
    if cid == "ce-batch-mismatch":
        for name in names:
            st = flow.assigned_before(name, fail + 1)
            if st is not None and re.search(r"\.view\(\s*-1\s*,", text(st)):
                line = st.lineno
                edit = replace_in_line(ctx.code, line, r"\.view\(\s*-1\s*,\s*\d+\s*\)",
                                       ".flatten(1)")
                out.append(Candidate(cid, line, 0.75, [
                    ("batch", {"fail_line": fail}), ("view-mixes", {"line": line})],
                    [Fix((edit,), runs_clean, T(f"flatten per sample on line {line}: "
                                                "`.flatten(1)`", f"在第 {line} 行按样本展平："
                                                "`.flatten(1)`"))] if edit else [],
                    {"line": line}))
        for st in flow.statements:
            if re.search(r"\.view\(\s*-1\s*,\s*\d+\s*\)", text(st)) and st.lineno in \
                    [fail, *ctx.trace_lines()]:
                edit = replace_in_line(ctx.code, st.lineno, r"\.view\(\s*-1\s*,\s*\d+\s*\)",
                                       ".flatten(1)")
                out.append(Candidate(cid, st.lineno, 0.7, [("batch", {"fail_line": fail})],
                                     [Fix((edit,), runs_clean,
                                          T(f"flatten per sample on line {st.lineno}",
                                            f"在第 {st.lineno} 行按样本展平"))] if edit else [],
                                     {"line": st.lineno}))
        return out
    last = max([fail, *ctx.trace_lines()]) + 1
    for name in sorted(names):
        st = flow.assigned_before(name, last)
        if st is None or "tensor(" not in text(st):
            continue
        line = st.lineno
        fixes = []
        if conv:
            edit = replace_in_line(ctx.code, line, r"\s*$", conv)
            if edit is not None:
                fixes.append(Fix((edit,), runs_clean, T(f"make the labels integer class indices "
                                                        f"on line {line}: `{conv}`",
                                                        f"在第 {line} 行把标签转为整数类别索引："
                                                        f"`{conv}`")))
        else:
            edit = replace_in_line(ctx.code, line, r"tensor\(\[([^\]]*)\]\)", "tensor([\\1]) - 1")
            if edit is not None:
                fixes.append(Fix((edit,), runs_clean, T(f"number the labels from 0 on line {line}",
                                                        f"在第 {line} 行让标签从 0 开始编号")))
        out.append(Candidate(cid, line, 0.6, [("labels", {"fail_line": fail}),
                                              ("made-here", {"line": line, "name": name})],
                             fixes, {"line": line, "name": name}))
    return out


def check_bool(ctx: Ctx) -> list[Candidate]:
    if "value of Tensor with more than one value is ambiguous" not in ctx.message:
        return []
    line = ctx.fail_line or 0
    stmt = ctx.flow.statement_at(line)
    fixes = []
    if isinstance(stmt, (ast.If, ast.While)):
        edit = replace_in_line(ctx.code, line, r"^(\s*)(if|while)\s+(.*):\s*$",
                               r"\1\2 bool((\3).all()):")
        if edit is not None:
            fixes.append(Fix((edit,), runs_clean, T(f"say which you mean on line {line}: all "
                                                    "elements (`.all()`) or any (`.any()`)",
                                                    f"在第 {line} 行说明你的意思："
                                                    "所有元素（`.all()`）"
                                                    "还是任一元素（`.any()`）")))
    return [Candidate("bool-ambiguous", line, 0.75, [("bool", {"line": line})], fixes,
                      {"line": line})]


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
    for owner in owners:
        made = flow.assigned_before(owner, fail, stmt) or flow.assigned_before(owner, fail)
        if made is None and owner.startswith("self."):
            made = next(iter(flow.assignments.get(owner, [])), None)
        if made is None:
            continue
        value = flow.value_of(made)
        src = text(value) if value is not None else ""
        line = made.lineno
        if "requires_grad=True" in src and isinstance(value, (ast.BinOp, ast.Call)) and not (
                isinstance(value, ast.Call) and "requires_grad" in text(value.keywords)
                if isinstance(value, ast.Call) else False):
            inner = src
            edit = Edit("replace", line, indent_of(flow.line(line)) +
                        text(made).split("=")[0].strip() + " = (" +
                        inner.replace(", requires_grad=True", "") + ").requires_grad_()")
            out.append(Candidate("grad-none-nonleaf", line, 0.8, [
                ("grad-none", {"fail_line": fail, "name": owner}),
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
                    ("grad-none", {"fail_line": fail, "name": owner}),
                    ("rebound", {"line": line, "name": owner})],
                    [Fix((edit, Edit("insert_after", line, f"{owner}.grad.zero_()")), runs_clean,
                         T(f"update `{owner}` in place under `torch.no_grad()` on line {line}",
                           f"在第 {line} 行于 `torch.no_grad()` 下原地更新 `{owner}`"))],
                    {"line": line, "name": owner}))
        elif isinstance(value, ast.Call) and call_name(value) in (
                "softmax", "double", "float", "to", "cuda", "sigmoid"):
            out.append(Candidate("grad-none-nonleaf", line, 0.7, [
                ("grad-none", {"fail_line": fail, "name": owner}),
                ("not-leaf", {"line": line, "name": owner})],
                [Fix((Edit("insert_after", line, f"{owner}.retain_grad()"),), runs_clean,
                     T(f"keep this tensor's gradient: `{owner}.retain_grad()` after line {line}",
                       f"保留该张量的梯度：在第 {line} 行之后调用 `{owner}.retain_grad()`"))],
                {"line": line, "name": owner}))
        elif value is not None and any(isinstance(n, ast.BinOp) for n in ast.walk(value)) \
                and "requires_grad" not in src:
            out.append(Candidate("grad-none-nonleaf", line, 0.6, [
                ("grad-none", {"fail_line": fail, "name": owner}),
                ("not-leaf", {"line": line, "name": owner})],
                [Fix((Edit("insert_after", line, f"{owner}.retain_grad()"),), runs_clean,
                     T(f"keep this tensor's gradient: `{owner}.retain_grad()` after line {line}",
                       f"保留该张量的梯度：在第 {line} 行之后调用 `{owner}.retain_grad()`"))],
                {"line": line, "name": owner}))
    backs = [b.line for b in ctx.evidence.backwards]
    if not out and owners and not backs:
        # .grad read before any backward ran
        loop_stmt = flow.statement_at(fail)
        edit = Edit("replace", fail, indent_of(flow.line(fail)) + f"if {owners[0]}.grad is not "
                    f"None: " + flow.line(fail).strip())
        out.append(Candidate("grad-is-none", fail, 0.6, [
            ("grad-before-backward", {"fail_line": fail, "name": owners[0]})],
            [Fix((edit,), runs_clean, T(f"only clear `{owners[0]}.grad` once it exists",
                                        f"只在 `{owners[0]}.grad` 存在时清零"))],
            {"line": fail, "name": owners[0]}))
        del loop_stmt
    return out


def check_int_requires_grad(ctx: Ctx) -> list[Candidate]:
    if "floating point" not in ctx.message or "require gradients" not in ctx.message:
        return []
    flow, fail = ctx.flow, ctx.fail_line or 0
    line = fail
    stmt = flow.statement_at(fail)
    if stmt is not None and "requires_grad=True" not in text(stmt):
        for name in flow.names_in(stmt):
            made = flow.assigned_before(name, fail)
            if made is not None:
                line = made.lineno
                break
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


def check_nonleaf_requires_grad(ctx: Ctx) -> list[Candidate]:
    if "can only change requires_grad flags of leaf variables" not in ctx.message:
        return []
    line = ctx.fail_line or 0
    return [Candidate("nonleaf-requires-grad", line, 0.8, [("nonleaf-flag", {"line": line})],
                      [Fix((Edit("delete", line),), runs_clean,
                           T(f"remove line {line}: a computed tensor's flag comes from its inputs",
                             f"删除第 {line} 行：计算得到的张量的标志来自它的输入"))],
                      {"line": line})]


def check_batchnorm_train(ctx: Ctx) -> list[Candidate]:
    if "Expected more than 1 value per channel when training" not in ctx.message:
        return []
    return _eval_candidates(ctx, "batchnorm-single-sample", batchnorm=True)


# -- silent bugs -----------------------------------------------------------------------
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
    # the model's name at the top level (the prediction may be inside a function)
    model = first.module.split(".")[0]
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
    roots = sorted({at, first.line})
    return [Candidate(cid, roots[0], 0.8, [
        ("predict-train-mode", {"line": first.line, "module": model}),
        ("no-eval", {"name": model}),
    ], [fix], {"line": roots[0], "module": model, "model": model})]


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
    return _eval_candidates(ctx, "dropout-no-eval")


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


def _loop_with(flow: Flow, name: str) -> list[ast.AST]:
    loops = []
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
        updates_by_hand = any(isinstance(n, ast.AugAssign) and ".grad" in text(n.value)
                              for n in ast.walk(loop))
        if not steps and not updates_by_hand:
            continue
        if not zeros:
            if steps:
                opt = receiver(steps[0]) or "optimizer"
                edit = Edit("insert_before", _first_body_line(loop), f"{opt}.zero_grad()")
            else:
                owner = next((text(n.target) for n in ast.walk(loop)
                              if isinstance(n, ast.AugAssign) and ".grad" in text(n.value)), "w")
                last = max(n.lineno for n in ast.walk(loop) if isinstance(n, ast.AugAssign))
                stmt = flow.statement_at(last)
                anchor = flow.parents.get(stmt) if stmt is not None else None
                at = anchor.lineno if isinstance(anchor, ast.With) else last
                edit = Edit("insert_after", at, f"{owner}.grad.zero_()")
                if isinstance(anchor, ast.With):
                    edit = Edit("insert_before", backward.lineno, f"{owner}.grad = None")
            out.append(Candidate("missing-zero-grad", loop.lineno, 0.75, [
                ("accumulates", {"line": backward.lineno}),
                ("no-zero-grad", {"line": loop.lineno}),
            ], [Fix((edit,), loss_improves, T("clear the gradients at every pass: "
                                              f"`{edit.text}`",
                                              f"每次循环都清零梯度：`{edit.text}`"))],
                {"line": loop.lineno}))
            continue
        if steps:
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


def check_optimizer_params(ctx: Ctx) -> list[Candidate]:
    ev, flow = ctx.evidence, ctx.flow
    if not ev.steps or not ev.backwards:
        return []
    trained = {p.name for p in ev.params if p.reached}
    in_opt = {p.name for p in ev.params if p.in_optimizer}
    idle = [p for p in ev.params if p.reached and not p.in_optimizer and p.requires_grad]
    if not idle:
        return []
    out = []
    opts = flow.optimizers()
    for stmt, name, call in opts:
        args = text(call.args[0]) if call.args else ""
        model = args.split(".parameters")[0] if ".parameters" in args else None
        # the model was rebuilt after the optimizer took its parameters
        if model:
            later = [s for s in flow.assignments.get(model, []) if s.lineno > stmt.lineno
                     and flow.scope_of(s) is flow.scope_of(stmt)]
            if later:
                line = later[0].lineno
                out.append(Candidate("optimizer-wrong-params", line, 0.9, [
                    ("params-not-in-optimizer", {"params": _names(idle)}),
                    ("rebuilt-after-optimizer", {"line": line, "model": model,
                                                 "optimizer": name}),
                ], [Fix((Edit("move_before", stmt.lineno, to=line + 1),),
                        both(params_learn([]), loss_improves),
                        T(f"create `{name}` after `{model}` is built for the last time: move "
                          f"line {stmt.lineno} below line {line}",
                          f"在最后一次构建 `{model}` 之后再创建 `{name}`："
                          f"把第 {stmt.lineno} 行移到第 "
                          f"{line} 行之后"))], {"line": line, "model": model, "optimizer": name}))
                continue
        top = {p.name.split(".")[0] for p in idle}
        used = sorted(top)[0] if top else None
        fixes = []
        if used and "." not in used and used != "?":
            edit = replace_in_line(ctx.code, stmt.lineno, r"\(\s*[^,]+?\.parameters\(\)",
                                   f"({used}.parameters()")
            if edit is None:
                edit = replace_in_line(ctx.code, stmt.lineno, r"\(\s*\[.*\]\s*(,|\))",
                                       lambda m, used=used: f"({used}.parameters()"
                                       f"{m.group(1)}")  # type: ignore[arg-type,misc]
            if edit is not None:
                fixes.append(Fix((edit,), both(params_learn([]), loss_improves),
                                 T(f"give `{name}` the parameters of `{used}`, the model the loss "
                                   f"uses: `{edit.text.strip()}`",
                                   f"把 `{used}`（损失所用的模型）的参数交给 `{name}`："
                                   f"`{edit.text.strip()}`")))
        out.append(Candidate("optimizer-wrong-params", stmt.lineno, 0.8, [
            ("params-not-in-optimizer", {"params": _names(idle)}),
            ("optimizer-built", {"line": stmt.lineno, "optimizer": name}),
        ], fixes, {"line": stmt.lineno, "optimizer": name}))
    del trained, in_opt
    return out


def _names(params: list) -> str:  # type: ignore[type-arg]
    return ", ".join(f"`{p.name}`" for p in params[:4])


def check_requires_grad_late(ctx: Ctx) -> list[Candidate]:
    out = []
    for op in ctx.evidence.ops:
        if op.kind == "requires_grad" and op.first_use is not None and op.first_use < op.line:
            name = op.name or "?"
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


def runs_clean_with_grad(name: str) -> Callable[[RunResult, RunResult], Text | None]:
    def expect(original: RunResult, fixed: RunResult) -> Text | None:
        ev = fixed.evidence
        if fixed.outcome != "ok" or ev is None:
            return None
        hit = next((p for p in ev.params if p.name == name), None)
        if hit is None or hit.grad_none:
            return None
        return T(f"with this change `{name}.grad` is computed",
                 f"改动后 `{name}.grad` 被计算出来")
    return expect


def check_graph_cut_silent(ctx: Ctx) -> list[Candidate]:
    ev = ctx.evidence
    if ctx.error is not None or not ev.backwards:
        return []
    idle = [p for p in ev.params if p.requires_grad and not p.reached and not p.changed]
    if not idle:
        return _python_cut_in_loss(ctx)
    out = []
    for op in ev.ops:
        if op.kind in ("data", "cut") and op.detail in ("", "nondifferentiable", "python") \
                and op.line not in {b.line for b in ev.backwards}:
            reason = "data" if op.kind == "data" else op.detail
            fixes = [Fix(f.edits, both(params_learn([p.name for p in idle]), loss_improves),
                         f.describe) for f in _cut_fixes(ctx, op.line, reason, op.op)]
            if op.op == "tolist" or "tensor(" in ctx.flow.line(op.line):
                m = re.search(r"torch\.tensor\((\w[\w.]*)\.tolist\(\)\)", ctx.flow.line(op.line))
                if m:
                    edit = replace_in_line(ctx.code, op.line, re.escape(m.group(0)), m.group(1))
                    if edit:
                        fixes.append(Fix((edit,), params_learn([p.name for p in idle]),
                                         T(f"use `{m.group(1)}` itself on line {op.line}",
                                           f"在第 {op.line} 行直接使用 `{m.group(1)}`")))
            out.append(Candidate("graph-cut-silent", op.line, 0.8, [
                ("params-idle", {"params": _names(idle)}),
                (CUT_STEP.get(reason, "cut-op"), {"line": op.line, "op": op.op}),
            ], fixes, {"line": op.line, "op": op.op, "params": _names(idle)}))
    return out


def _python_cut_in_loss(ctx: Ctx) -> list[Candidate]:
    """A term of the loss turned into a Python number and back: it adds to the value but
    passes no gradient (the loss still has a graph through its other terms)."""
    ev, flow = ctx.evidence, ctx.flow
    out = []
    for op in ev.ops:
        if op.kind != "cut" or op.detail != "python":
            continue
        src = flow.line(op.line)
        m = re.search(r"torch\.tensor\((.+)\.(item|tolist)\(\)\)", src)
        if not m:
            continue
        edit = replace_in_line(ctx.code, op.line, re.escape(m.group(0)), m.group(1))
        out.append(Candidate("graph-cut-silent", op.line, 0.7, [
            (CUT_STEP["python"], {"line": op.line, "op": op.op})],
            [Fix((edit,), cut_gone(op.line), T(f"keep the term a tensor on line {op.line}: "
                                               f"`{m.group(1)}`",
                                               f"第 {op.line} 行保持张量：`{m.group(1)}`"))]
            if edit else [], {"line": op.line, "op": op.op, "params": "this term"}))
    return out


def cut_gone(line: int) -> Callable[[RunResult, RunResult], Text | None]:
    def expect(original: RunResult, fixed: RunResult) -> Text | None:
        ev = fixed.evidence
        if fixed.outcome != "ok" or ev is None:
            return None
        if any(o.kind == "cut" and o.line == line for o in ev.ops):
            return None
        return T(f"with this change the value computed on line {line} keeps its graph and "
                 "passes gradients back", f"改动后第 {line} 行算出的值保留计算图并回传梯度")
    return expect


def check_frozen(ctx: Ctx) -> list[Candidate]:
    ev, flow = ctx.evidence, ctx.flow
    if ctx.error is not None:
        return []
    frozen = [p for p in ev.params if not p.requires_grad and not p.changed]
    if not frozen:
        return []
    out = []
    for stmt in flow.statements:
        if isinstance(stmt, ast.Assign) and any(text(t).endswith("requires_grad")
                                                for t in stmt.targets) \
                and isinstance(stmt.value, ast.Constant) and stmt.value.value is False:
            loop = flow.parents.get(stmt)
            line = loop.lineno if isinstance(loop, ast.For) else stmt.lineno
            edits = (Edit("delete", stmt.lineno), Edit("delete", loop.lineno)) if isinstance(
                loop, ast.For) and len(loop.body) == 1 else (Edit("delete", stmt.lineno),)
            out.append(Candidate("frozen-params", line, 0.7, [
                ("frozen-idle", {"params": _names(frozen), "line": line})],
                [Fix(edits, params_learn([p.name for p in frozen]),
                     T(f"do not freeze these parameters (line {line})",
                       f"不要冻结这些参数（第 {line} 行）"))], {"line": line}))
    return out


SOFTMAXES = ("softmax", "Softmax")


def check_softmax_ce(ctx: Ctx) -> list[Candidate]:
    flow, code = ctx.flow, ctx.code
    losses_used = {call_name(c) for c in flow.calls}
    crits = {name for name, stmts in flow.assignments.items()
             if any(isinstance(flow.value_of(s), ast.Call) and call_name(flow.value_of(s)) in
                    ("CrossEntropyLoss", "NLLLoss") for s in stmts)}
    ce = crits or losses_used & {"cross_entropy", "nll_loss", "CrossEntropyLoss", "NLLLoss"}
    if not ce:
        return []
    nll = any("NLLLoss" in flow.line(s.lineno) for n in crits for s in flow.assignments[n]) or \
        "nll_loss" in losses_used
    out = []
    for call in flow.calls:
        name = call_name(call)
        if name not in SOFTMAXES or "log_softmax" in flow.line(call.lineno):
            continue
        line = call.lineno
        src = flow.line(line)
        edits: list[Edit] = []
        if nll:
            e = replace_in_line(code, line, r"\bsoftmax\(", "log_softmax(")
            e = e or replace_in_line(code, line, r"\bSoftmax\(", "LogSoftmax(")
            if e:
                edits.append(e)
        else:
            e = replace_in_line(code, line, r",\s*nn\.Softmax\([^)]*\)", "")
            if e is None and call.args:
                e = replace_in_line(code, line, re.escape(text(call)), text(call.args[0]))
                if e is None:
                    inner = text(call.args[0])
                    e = Edit("replace", line, src.replace(src[call.col_offset:call.end_col_offset]
                                                          if call.end_col_offset else "", inner, 1))
            if e:
                edits.append(e)
        fixes = [Fix((e,), loss_improves, T(
            f"{'use log_softmax' if nll else 'return the raw scores (logits)'} on line {line}: "
            f"`{e.text.strip()}`",
            f"第 {line} 行{'改用 log_softmax' if nll else '直接返回原始分数（logits）'}："
            f"`{e.text.strip()}`")) for e in edits]
        first = losses(ctx.result)
        out.append(Candidate("softmax-before-ce", line, 0.85, [
            ("softmax-then-loss", {"line": line, "criterion": "NLLLoss" if nll else
                                   "CrossEntropyLoss"}),
            ("loss-stays", {"loss_first": f"{first[0]:.4g}" if first else "?",
                            "loss_last": f"{first[-1]:.4g}" if first else "?"}),
        ], fixes, {"line": line, "criterion": "NLLLoss" if nll else "CrossEntropyLoss"}))
    return out


def check_double_sigmoid(ctx: Ctx) -> list[Candidate]:
    flow, code = ctx.flow, ctx.code
    if not any("BCEWithLogits" in line or "binary_cross_entropy_with_logits" in line
               for line in flow.lines):
        return []
    out = []
    for call in flow.calls:
        if call_name(call) == "sigmoid":
            line = call.lineno
            inner = text(call.args[0]) if call.args else (
                receiver(call) if receiver(call) else None)
            if inner is None:
                continue
            e = replace_in_line(code, line, re.escape(text(call)), inner)
            out.append(Candidate("double-sigmoid", line, 0.8, [
                ("sigmoid-then-logits-loss", {"line": line})],
                [Fix((e,), loss_improves, T(f"feed the logits to BCEWithLogitsLoss: "
                                            f"`{e.text.strip()}`",
                                            "把 logits 交给 BCEWithLogitsLoss："
                                            f"`{e.text.strip()}`"))]
                if e else [], {"line": line}))
    return out


def check_relu_output(ctx: Ctx) -> list[Candidate]:
    flow, code = ctx.flow, ctx.code
    if ctx.error is not None:
        return []
    out = []
    for stmt in flow.statements:
        if isinstance(stmt, ast.Return) and isinstance(stmt.value, ast.Call) and \
                call_name(stmt.value) == "relu" and stmt.value.args:
            inner = text(stmt.value.args[0])
            e = replace_in_line(code, stmt.lineno, re.escape(text(stmt.value)), inner)
            out.append(Candidate("relu-output", stmt.lineno, 0.6, [
                ("relu-out", {"line": stmt.lineno})],
                [Fix((e,), loss_improves, T("return the output layer without ReLU",
                                            "输出层之后不要再接 ReLU"))] if e else [],
                {"line": stmt.lineno}))
        if isinstance(stmt, ast.Assign) and "Sequential" in text(stmt.value) and \
                re.search(r",\s*nn\.ReLU\(\)\)\s*$", flow.line(stmt.lineno)):
            e = replace_in_line(code, stmt.lineno, r",\s*nn\.ReLU\(\)\)\s*$", ")")
            out.append(Candidate("relu-output", stmt.lineno, 0.6, [
                ("relu-out", {"line": stmt.lineno})],
                [Fix((e,), loss_improves, T("drop the final ReLU", "去掉最后的 ReLU"))]
                if e else [], {"line": stmt.lineno}))
    return out


def check_lr(ctx: Ctx) -> list[Candidate]:
    ls = [v for v in losses(ctx.result)]
    ev = ctx.evidence
    raw = [b.loss for b in ev.backwards]
    if len(raw) < 4 or (not ev.steps and not any(
            isinstance(n, ast.AugAssign) for n in ast.walk(ctx.flow.tree))):
        return []
    nonfinite = any(isinstance(v, str) for v in raw)
    rising = len(ls) >= 4 and ls[-1] > ls[0] * 1.5
    ups = sum(1 for a, b in itertools.pairwise(ls) if b > a)
    oscillating = len(ls) >= 6 and ups >= (len(ls) - 1) * 0.4 and not ls[-1] < ls[0] * 0.5
    if not (nonfinite or rising or oscillating):
        return []
    flow = ctx.flow
    out = []
    for stmt in flow.statements:
        src = flow.line(stmt.lineno)
        m = re.search(r"\blr\s*=\s*([0-9.eE+-]+)", src)
        if m and isinstance(stmt, (ast.Assign, ast.Expr)):
            try:
                value = float(m.group(1))
            except ValueError:
                continue
            if value <= 0:
                continue
            fixes = []
            for factor in (100, 1000):
                new = f"{value / factor:g}"
                e = replace_in_line(ctx.code, stmt.lineno, r"(\blr\s*=\s*)[0-9.eE+-]+",
                                    rf"\g<1>{new}")
                if e:
                    fixes.append(Fix((e,), loss_improves,
                                     T(f"lower the learning rate on line {stmt.lineno} to {new}",
                                       f"把第 {stmt.lineno} 行的学习率降到 {new}")))
            shape = "nan/inf" if nonfinite else ("rising" if rising else "oscillating")
            out.append(Candidate("lr-too-high", stmt.lineno, 0.6, [
                ("loss-diverges", {"loss_first": f"{ls[0]:.4g}" if ls else "?",
                                   "loss_last": str(raw[-1]) if isinstance(raw[-1], str)
                                   else f"{raw[-1]:.4g}", "detail": shape}),
                ("lr-set", {"line": stmt.lineno, "lr": m.group(1)}),
            ], fixes, {"line": stmt.lineno, "lr": m.group(1)}))
        else:
            m2 = re.search(r"\b(\w+)\s*\(\s*lr\s*=\s*([0-9.eE+-]+)\s*\)", src)
            if m2 and isinstance(stmt, ast.Expr | ast.Assign):
                pass
    if not out:
        for stmt in flow.statements:
            m = re.search(r"\(.*\blr\s*=\s*([0-9.eE+-]+)", flow.line(stmt.lineno))
            if m:
                break
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


def no_broadcast_warning(original: RunResult, fixed: RunResult) -> Text | None:
    if fixed.outcome != "ok":
        return None
    if any("different to the input size" in w.message for w in fixed.warnings):
        return None
    return T("with this change prediction and target have the same shape and the loss "
             "compares them element by element",
             "改动后预测与目标形状相同，损失逐元素比较它们")


DEBUG = False  # tests of the checks set it, so a check's own bug is not hidden

EXCEPTION_CHECKS = [check_backward_twice, check_lost_graph, check_inplace_saved,
                    check_leaf_inplace, check_non_scalar, check_numpy, check_linear_shape,
                    check_dtype, check_ce_target, check_bool, check_grad_none,
                    check_int_requires_grad, check_nonleaf_requires_grad, check_batchnorm_train]
SILENT_CHECKS = [check_uncalled, check_zero_grad, check_optimizer_params,
                 check_requires_grad_late, check_graph_cut_silent, check_frozen, check_softmax_ce,
                 check_double_sigmoid, check_dropout_eval, check_lr, check_broadcast,
                 check_relu_output]


def candidates(ctx: Ctx) -> list[Candidate]:
    found: list[Candidate] = []
    checks = EXCEPTION_CHECKS if ctx.error is not None else SILENT_CHECKS
    for check in checks:
        try:
            found.extend(check(ctx))
        except (ValueError, IndexError, KeyError, AttributeError, TypeError, re.error):
            if DEBUG:
                raise
            continue  # a check that cannot read this program gives no candidate
    return found


def fixed_code(code: str, fix: Fix) -> str | None:
    return apply(code, fix.edits)

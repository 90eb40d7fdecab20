"""Checks of exceptions about the graph: a second backward through a freed graph, a loss with
no graph, a saved tensor changed in place, a leaf changed in place, a non-scalar backward,
NumPy from a tensor that requires grad, a ``.grad`` that is None, integer tensors asked to
require grad."""

from __future__ import annotations

import ast
import re

from tutor.diagnosis.candidate import Candidate, Ctx
from tutor.diagnosis.fixes import Edit, Fix, indent_of, replace_in_line
from tutor.diagnosis.flow import Flow, call_name, receiver, target_names, text
from tutor.diagnosis.verify import backward_runs, runs_clean
from tutor.i18n import T


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

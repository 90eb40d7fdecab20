"""Checks of what a call was given, for torch messages the other checks do not read: a NumPy
array or a tuple where a tensor was wanted, a name that was a function until a tensor was
assigned to it, a ``dim`` past the tensor's last dimension, the mean of integers, a tensor
built from a leaf by an op and handed to an optimizer, ``parameters()`` used up before the
optimizer read it. Each names the line that made the value (often not the failing one) and
a change that the re-run checks."""

from __future__ import annotations

import ast
import re

from tutor.diagnosis.candidate import Candidate, Check, Ctx, at_failing_line
from tutor.diagnosis.fixes import (
    Edit,
    Fix,
    node_fix,
    postfix,
    replace_node,
    replace_nodes,
    suffix_value,
)
from tutor.diagnosis.flow import call_name, receiver, target_names, text
from tutor.diagnosis.source import method_calls
from tutor.diagnosis.verify import runs_clean
from tutor.i18n import T
from tutor.sandbox.models import ValueSnapshot

NOT_A_TENSOR = re.compile(r"argument '(?P<arg>\w+)' \(position (?P<pos>\d+)\) must be Tensor, "
                          r"not (?P<given>[\w.]+)")
TUPLE_USED = re.compile(r"'tuple' object has no attribute '\w+'|tuple indices must be integers "
                        r"or slices, not tuple")
"""A tuple where the line uses a tensor: what a module or loss that returns several values
gave."""
FROM_NUMPY = "torch.from_numpy({x}).float()"


def _locals(ctx: Ctx) -> dict[str, object]:
    return dict(ctx.error.locals) if ctx.error is not None else {}


def _type_of(ctx: Ctx, name: str) -> str | None:
    snap = _locals(ctx).get(name)
    return snap.type if isinstance(snap, ValueSnapshot) else None


def _args_on(stmt: ast.stmt) -> list[ast.expr]:
    return [a for n in ast.walk(stmt) if isinstance(n, ast.Call) for a in n.args]


def check_not_a_tensor(ctx: Ctx) -> list[Candidate]:
    """``linear(): argument 'input' (position 1) must be Tensor, not numpy.ndarray``: the
    value was made as a NumPy array (convert it where it is made) or is a tuple (a module
    that returns several values: take the tensor out where the call's result is kept)."""
    m = NOT_A_TENSOR.search(ctx.message)
    used = TUPLE_USED.search(ctx.message)
    if m is None and used is None:
        return []
    given = m.group("given") if m is not None else "tuple"
    line, stmt = ctx.failing_statement()
    if stmt is None:
        return []
    kind = "ndarray" if given.endswith("ndarray") else given
    # a tuple used as a tensor on the line itself (``out.backward()``, ``out[:, -1]``), or
    # given to a call that wants one
    read = [n for n in ast.walk(stmt) if isinstance(n, ast.Name)] if used else _args_on(stmt)
    names = [a.id for a in read if isinstance(a, ast.Name)
             and (_type_of(ctx, a.id) or "").endswith(kind)]
    out = []
    for name in dict.fromkeys(names):
        made = ctx.flow.assigned_before(name, line + 1)
        if made is None:
            continue
        fixes = []
        value = ctx.flow.value_of(made)
        if kind == "ndarray" and value is not None:
            fixes.append(node_fix(ctx.code, value, FROM_NUMPY.format(x=text(value)), runs_clean,
                                  T(f"make `{name}` a float tensor where it is made (line "
                                    f"{made.lineno}): `torch.from_numpy(...).float()`",
                                    f"在创建 `{name}` 的第 {made.lineno} 行把它变成浮点张量："
                                    "`torch.from_numpy(...).float()`")))
        elif kind == "tuple" and isinstance(made, ast.Assign) and len(made.targets) == 1 \
                and isinstance(made.targets[0], ast.Name):
            edit = replace_node(ctx.code, made.targets[0], f"{name}, *_")
            fixes.append(Fix((edit,), runs_clean, T(
                f"keep the first value the call returns on line {made.lineno}: "
                f"`{name}, *_ = ...`",
                f"第 {made.lineno} 行只保留调用返回的第一个值：`{name}, *_ = ...`"))
                if edit is not None else None)
        cid, step = ("not-a-tensor", "not-a-tensor") if m is not None else (
            "tuple-used-as-tensor", "tuple-used")
        facts = {"fail_line": line, "name": name, "given": given, "line": made.lineno}
        out.append(Candidate(cid, made.lineno, 0.85, [(step, facts)],
                             [f for f in fixes if f is not None], facts))
    return out


def check_shadowed_callable(ctx: Ctx) -> list[Candidate]:
    """``'Tensor' object is not callable``: the name called on the failing line was a loss
    or a layer until an assignment rebound it to a tensor (``loss = loss(out, y)``). Give
    the tensor a name of its own on that line and where it is read after it."""
    if "'Tensor' object is not callable" not in ctx.message:
        return []
    line, stmt = ctx.failing_statement()
    if stmt is None:
        return []
    called = [n.func.id for n in ast.walk(stmt) if isinstance(n, ast.Call)
              and isinstance(n.func, ast.Name)]
    out = _result_called(ctx, line, stmt)
    for name in dict.fromkeys(called):
        rebinds = [s for s in ctx.flow.assignments.get(name, []) if isinstance(s, ast.Assign)
                   and isinstance(s.value, ast.Call) and any(
                       isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                       and n.func.id == name for n in ast.walk(s.value))]
        if not rebinds:
            continue
        rebind = rebinds[0]
        fresh = next((f"{name}_{k}" for k in ("value", "out", "result")
                      if f"{name}_{k}" not in ctx.flow.names_in(ctx.flow.tree)), None)
        fix = _rename_result(ctx, rebind, name, fresh) if fresh is not None else None
        out.append(Candidate("tensor-not-callable", rebind.lineno, 0.85, [
            ("rebound-callable", {"line": rebind.lineno, "name": name, "fail_line": line})],
            [fix] if fix is not None else [],
            {"line": rebind.lineno, "name": name, "fail_line": line}))
    return out


def _result_called(ctx: Ctx, line: int, stmt: ast.stmt) -> list[Candidate]:
    """``F.cross_entropy(y_hat, y)(y_hat, y)``: the result of a call (a function of torch's
    or the learner's, not a class that builds a layer) called again. The one call is the
    fix; the re-run checks it."""
    out = []
    for node in ast.walk(stmt):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Call)):
            continue
        inner = node.func
        name = call_name(inner)
        if not name or name[:1].isupper():
            continue  # nn.MSELoss()(a, b) builds a loss, then calls it
        shown = text(inner)
        fix = node_fix(ctx.code, node, shown, runs_clean, T(
            f"call it once on line {line}: `{shown}`",
            f"第 {line} 行只调用一次：`{shown}`"))
        fill = {"line": line, "op": f"`{shown}`", "detail": f"`{text(node)[len(shown):]}`"}
        out.append(Candidate("tensor-result-called", line, 0.9, [("result-called", fill)],
                             [fix] if fix is not None else [], fill))
    return out


def _rename_result(ctx: Ctx, rebind: ast.Assign, name: str, fresh: str) -> Fix | None:
    """``fresh`` for the tensor ``rebind`` assigns to ``name``, on its line and every read of
    ``name`` below it in the same scope that is not a call of it."""
    flow = ctx.flow
    scope = flow.scope_of(rebind)
    end = max((s.end_lineno or s.lineno for s in flow.statements if flow.scope_of(s) is scope),
              default=rebind.lineno)
    loops = flow.loops_of(rebind)
    if loops:  # inside a loop the next pass calls it again: reads up to the loop's end
        end = min(end, loops[0].end_lineno or end)
    target = rebind.targets[0]
    edits: list[Edit] = []
    head = replace_node(ctx.code, target, fresh) if isinstance(target, ast.Name) else None
    if head is None:
        return None
    edits.append(head)
    called = {id(n.func) for n in ast.walk(flow.tree) if isinstance(n, ast.Call)}
    by_line: dict[int, list[ast.Name]] = {}
    for node in ast.walk(flow.tree):
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load) \
                and id(node) not in called and rebind.lineno < node.lineno <= end:
            by_line.setdefault(node.lineno, []).append(node)
    for reads in by_line.values():
        edit = replace_nodes(ctx.code, [(n, fresh) for n in reads])
        if edit is None:
            return None
        edits.append(edit)
    return Fix(tuple(edits), runs_clean, T(
        f"give the result its own name on line {rebind.lineno} (`{fresh} = ...`), so `{name}` "
        "stays the function it was",
        f"第 {rebind.lineno} 行给结果起一个自己的名字（`{fresh} = ...`），"
          f"让 `{name}` 保持原来的函数"))


DIM_RANGE = re.compile(r"Dimension out of range \(expected to be in range of \[(-?\d+), "
                       r"(-?\d+)\], but got (-?\d+)\)")


def check_dim_range(ctx: Ctx) -> list[Candidate]:
    """``Dimension out of range``: a ``dim`` given as a number past the tensor's last
    dimension (``softmax(scores, dim=1)`` of a vector): the last dimension, ``-1``, is what
    such code means where the tensor has one dimension fewer than written for."""
    m = DIM_RANGE.search(ctx.message)
    if m is None:
        return []
    got = int(m.group(3))
    line, stmt = ctx.failing_statement()
    if stmt is None:
        return []
    fixes = []
    for call in (n for n in ast.walk(stmt) if isinstance(n, ast.Call)):
        given = next((k.value for k in call.keywords if k.arg == "dim"), None)
        if given is None and receiver(call) is not None and call.args:
            given = call.args[0] if call_name(call) in ("softmax", "log_softmax", "sum",
                                                         "mean", "argmax", "max", "size",
                                                         "squeeze", "unsqueeze") else None
        if isinstance(given, ast.Constant) and given.value == got:
            fixes.append(node_fix(ctx.code, given, "-1", runs_clean, T(
                f"use the last dimension on line {line}: `-1` for `{got}`",
                f"第 {line} 行改用最后一维：把 `{got}` 改成 `-1`")))
    return at_failing_line(ctx, "dim-out-of-range", "dim-range", fixes, 0.75)


def check_integer_mean(ctx: Ctx) -> list[Candidate]:
    """``mean(): could not infer output dtype``: a mean of integers (labels, counts)."""
    if "could not infer output dtype" not in ctx.message:
        return []
    line, stmt = ctx.failing_statement()
    fixes = [node_fix(ctx.code, call.func.value, f"{text(call.func.value)}.float()", runs_clean,
                      T(f"make it floating point before the mean on line {line}: `.float()`",
                        f"第 {line} 行求均值前先转为浮点：`.float()`"))
             for call in method_calls(stmt, "mean")[:1] if isinstance(call.func, ast.Attribute)]
    # the integers may meet other float-only ops after the mean (``.std()``): made floating
    # point where the name gets them, every later use is
    for call in method_calls(stmt, "mean")[:1]:
        owner = call.func.value if isinstance(call.func, ast.Attribute) else None
        if not isinstance(owner, ast.Name) or stmt is None:
            continue
        made = ctx.flow.assigned_before(owner.id, line, stmt)
        value = ctx.flow.value_of(made) if isinstance(made, ast.Assign) and len(
            made.targets) == 1 and isinstance(made.targets[0], ast.Name) else None
        if value is not None and made is not None:
            fixes.append(node_fix(ctx.code, value, postfix(value, ".float()"), runs_clean, T(
                f"make `{owner.id}` floating point where it is made, on line {made.lineno}: "
                "`.float()`",
                f"在第 {made.lineno} 行得到 `{owner.id}` 的地方就把它转为浮点：`.float()`")))
    return at_failing_line(ctx, "mean-of-integers", "integer-mean", fixes, 0.8)


def check_nonleaf_optimized(ctx: Ctx) -> list[Candidate]:
    """``can't optimize a non-leaf Tensor``: a tensor the optimizer is given was made by an
    op from a leaf (``torch.randn(3, requires_grad=True) * 0.01``, ``.to(...)``): make the
    result the leaf, by asking for gradients after the op."""
    failing = ctx.failing_on("can't optimize a non-leaf Tensor")
    if failing is None:
        return []
    flow, line = ctx.flow, failing[0]
    out = []
    for call in [c for c in flow.calls if any(k.arg == "requires_grad" for k in c.keywords)]:
        made = flow.statement_at(call.lineno)
        if not isinstance(made, ast.Assign) or len(made.targets) != 1:
            continue
        value = made.value
        if value is call:
            continue  # the leaf itself
        names = target_names(made.targets[0])
        kw = next((k for k in call.keywords if k.arg == "requires_grad"), None)
        if kw is None or not names:
            continue
        inner = replace_node(ctx.code, value, _leaf_after(ctx.code, value, call, kw))
        if inner is None:
            continue
        out.append(Candidate("optimizer-non-leaf", made.lineno, 0.85, [
            ("made-non-leaf", {"line": made.lineno, "name": names[0], "fail_line": line})],
            [Fix((inner,), runs_clean, T(
                f"ask for gradients after the op on line {made.lineno}, so `{names[0]}` is the "
                "leaf: `(...).requires_grad_()`",
                f"第 {made.lineno} 行在运算之后再要求梯度，让 `{names[0]}` 成为叶子："
                "`(...).requires_grad_()`"))],
            {"line": made.lineno, "name": names[0], "fail_line": line}))
    return out


def _leaf_after(code: str, value: ast.expr, call: ast.Call, kw: ast.keyword) -> str:
    """``(torch.randn(3) * 0.01).requires_grad_()`` for ``torch.randn(3, requires_grad=True)
    * 0.01``: the keyword dropped from the inner call, the whole made a leaf."""
    whole = text(value)
    inner = text(call)
    kept = [text(a) for a in call.args] + [f"{k.arg}={text(k.value)}" for k in call.keywords
                                           if k is not kw]
    bare = f"{text(call.func)}({', '.join(kept)})"
    return f"({whole.replace(inner, bare, 1)}).requires_grad_()"


def check_params_used_up(ctx: Ctx) -> list[Candidate]:
    """``optimizer got an empty parameter list`` for a model that has parameters: the
    optimizer was given a generator (``params = model.parameters()``) that an earlier loop
    or ``sum``/``list`` already ran to its end. Keep the parameters in a list."""
    failing = ctx.failing_on("optimizer got an empty parameter list")
    if failing is None:
        return []
    flow, (line, stmt) = ctx.flow, failing
    given = [a.id for n in ast.walk(stmt) if isinstance(n, ast.Call) for a in n.args
             if isinstance(a, ast.Name)]
    out = []
    for name in given:
        made = flow.assigned_before(name, line, stmt) or flow.assigned_before(name, line)
        value = flow.value_of(made) if made is not None else None
        if not (isinstance(value, ast.Call) and call_name(value) in (
                "parameters", "named_parameters")):
            continue
        used = [n for n in ast.walk(flow.tree) if isinstance(n, ast.Name) and n.id == name
                and isinstance(n.ctx, ast.Load) and made is not None
                and made.lineno < n.lineno < line]
        if not used:
            continue
        edit = replace_node(ctx.code, value, f"list({text(value)})")
        out.append(Candidate("params-used-up", made.lineno if made else line, 0.9, [
            ("generator-used", {"line": made.lineno if made else line, "name": name,
                                "first_use": used[0].lineno, "fail_line": line})],
            [Fix((edit,), runs_clean, T(
                f"keep the parameters in a list on line {made.lineno if made else line}: "
                f"`list({text(value)})`", f"第 {made.lineno if made else line} 行把参数存成列表："
                f"`list({text(value)})`"))] if edit is not None else [],
            {"line": made.lineno if made else line, "name": name, "first_use": used[0].lineno,
             "fail_line": line}))
    return out


TARGET_SIZE = re.compile(r"Target size \(torch\.Size\(\[([^\]]*)\]\)\) must be the same as "
                         r"input size \(torch\.Size\(\[([^\]]*)\]\)\)")


def check_target_size(ctx: Ctx) -> list[Candidate]:
    """``Target size (torch.Size([8])) must be the same as input size (torch.Size([8, 1]))``:
    one side has a dimension of size 1 the other does not (a one-output model's scores
    (N, 1), labels built as one row (1, N)). Drop it from that side: where it was made when
    the learner's code made it so outside the model (the labels' nested list), else where
    the loss is called."""
    m = TARGET_SIZE.search(ctx.message)
    if m is None:
        return []
    target = [int(n) for n in re.findall(r"\d+", m.group(1))]
    given = [int(n) for n in re.findall(r"\d+", m.group(2))]
    line, stmt = ctx.failing_statement()
    if stmt is None:
        return []
    call = next((n for n in ast.walk(stmt) if isinstance(n, ast.Call) and len(n.args) == 2), None)
    if call is None:
        return []
    scores, labels = call.args
    dim = _extra_one(given, target)
    if dim is not None:
        arg, what = scores, T(f"drop the scores' dimension {dim} of size 1",
                              f"去掉得分第 {dim} 维那个大小为 1 的维度")
    else:
        dim = _extra_one(target, given)
        if dim is None:
            return []
        arg, what = labels, T(f"drop the targets' dimension {dim} of size 1",
                              f"去掉目标第 {dim} 维那个大小为 1 的维度")
    suffix = f".squeeze({dim})"
    fixes: list[Fix | None] = []
    root = _made_with_extra_one(ctx, arg, dim)
    if root is not None:
        edit = suffix_value(ctx.code, root, suffix)
        fixes.append(Fix((edit,), runs_clean, T(
            f"{what.en} where it is made (line {root.lineno}): `{suffix}`",
            f"在创建处（第 {root.lineno} 行）{what.zh}：`{suffix}`")) if edit else None)
    fixes.append(node_fix(ctx.code, arg, f"{text(arg)}{suffix}" if isinstance(
        arg, (ast.Name, ast.Call, ast.Attribute, ast.Subscript)) else f"({text(arg)}){suffix}",
        runs_clean, T(f"{what.en} on line {line}: `{suffix}`",
                      f"第 {line} 行{what.zh}：`{suffix}`")))
    found = at_failing_line(ctx, "target-size-differs", "target-size", fixes, 0.8)
    if root is not None:
        found[0].root_line = root.lineno
        found[0].steps.append(("extra-one-made", {"line": root.lineno, "name": text(arg),
                                                  "dim": dim}))
    return found


def _extra_one(longer: list[int], shorter: list[int]) -> int | None:
    """The dimension of size 1 that ``longer`` has where ``shorter`` has none."""
    for dim, size in enumerate(longer):
        if size == 1 and longer[:dim] + longer[dim + 1:] == shorter:
            return dim
    return None


def _made_with_extra_one(ctx: Ctx, arg: ast.expr, dim: int) -> ast.stmt | None:
    """The statement outside any model that made the named operand with that dimension of
    size 1 (``label = torch.tensor([[...]])``), from the evidence's record of the operand."""
    failed = ctx.evidence.failed
    if failed is None or not isinstance(arg, ast.Name):
        return None
    operand = next((o for o in failed.inputs if o.name == arg.id), None)
    if operand is None or not operand.history:
        return None
    made = operand.history[0]
    if made.module is not None or made.shape is None or dim >= len(made.shape) or \
            made.shape[dim] != 1:
        return None
    stmt = ctx.flow.assigned_before(arg.id, (ctx.fail_line or 0) + 1)
    return stmt if stmt is not None and stmt.lineno == made.line else None


KEYS = re.compile(r'(?P<which>Missing|Unexpected) key\(s\) in state_dict: '
                  r'(?P<keys>(?:"[^"]+"(?:, )?)+)')


def check_state_dict_prefix(ctx: Ctx) -> list[Candidate]:
    """``load_state_dict`` given keys that differ from the model's by a prefix: saved from a
    wrapper (``nn.DataParallel`` adds ``module.``) or from an outer model. The keys are
    renamed where they are given, and the re-run shows the load working."""
    found = {m.group("which"): re.findall(r'"([^"]+)"', m.group("keys"))
             for m in KEYS.finditer(ctx.message)}
    missing, unexpected = found.get("Missing", []), found.get("Unexpected", [])
    if not missing or not unexpected:
        return []
    line, stmt = ctx.failing_statement()
    call = next((n for n in ast.walk(stmt) if isinstance(n, ast.Call) and n.args
                 and call_name(n) == "load_state_dict"), None) if stmt is not None else None
    if call is None:
        return []
    prefix, renamed = _prefix(missing, unexpected)
    if prefix is None:
        return []
    given = text(call.args[0])
    fill = {"line": line, "name": given, "detail": f"`{prefix}`",
            "given": f"`{unexpected[0]}`", "target": f"`{missing[0]}`"}
    if renamed == "strip":
        new = f"{{k.removeprefix({prefix!r}): v for k, v in {given}.items()}}"
        fix = node_fix(ctx.code, call.args[0], new, runs_clean, T(
            f"on line {line} rename the saved keys to the model's: `{new}`",
            f"第 {line} 行把保存的键名改成模型的键名：`{new}`"))
        return [Candidate("state-dict-prefix", line, 0.9, [("state-dict-prefix", fill)],
                          [fix] if fix is not None else [], fill)]
    # the model's keys carry the prefix: the weights of the bare model loaded into its
    # wrapper, which holds that model as ``.module``
    fixes = []
    owner = call.func.value if isinstance(call.func, ast.Attribute) else None
    if owner is not None and prefix == "module.":
        inner = f"{text(owner)}.module"
        fixes.append(node_fix(ctx.code, owner, inner, runs_clean, T(
            f"on line {line} load the weights into the wrapped model: `{inner}.load_state_dict"
            f"({given})`", f"第 {line} 行把权重加载到被包装的模型中：`{inner}.load_state_dict"
            f"({given})`")))
    new = f"{{{prefix!r} + k: v for k, v in {given}.items()}}"
    fixes.append(node_fix(ctx.code, call.args[0], new, runs_clean, T(
        f"on line {line} rename the saved keys to the model's: `{new}`",
        f"第 {line} 行把保存的键名改成模型的键名：`{new}`")))
    return [Candidate("state-dict-prefix-missing", line, 0.9, [("state-dict-prefix-missing",
                                                                 fill)],
                      [f for f in fixes if f is not None], fill)]


def _prefix(missing: list[str], unexpected: list[str]) -> tuple[str | None, str]:
    """The prefix the saved keys have and the model's lack ("strip"), or the other way
    round ("add"); None when the two sets of keys do not differ by one prefix."""
    # the renamed saved keys must give every key the model misses; a saved key left over
    # may be one the model makes itself when absent (BatchNorm's ``num_batches_tracked``)
    for longer, shorter, how in ((unexpected, missing, "strip"), (missing, unexpected, "add")):
        first, other = longer[0], shorter[0]
        if not first.endswith(other) or first == other:
            continue
        prefix = first[: len(first) - len(other)]
        if not prefix.endswith("."):
            continue  # a prefix ends where a module's name does (`module.`, `body.`)
        stripped = {k.removeprefix(prefix) for k in longer if k.startswith(prefix)}
        if (stripped >= set(shorter)) if how == "strip" else (set(shorter) >= stripped):
            return prefix, how
    return None, ""


EXCEPTION_CHECKS: tuple[Check, ...] = (check_not_a_tensor, check_state_dict_prefix,
                                       check_shadowed_callable, check_dim_range,
                                       check_integer_mean, check_nonleaf_optimized,
                                       check_params_used_up, check_target_size)
SILENT_CHECKS: tuple[Check, ...] = ()

"""Checks of how the program is put together: a module whose ``__init__`` skips
``super().__init__()``, layers kept in a plain Python list (the model does not register
them), a loss turned into a Python number before ``backward()``, a ``view`` of a
non-contiguous tensor, a list of tensors given to ``torch.tensor``, a loss that takes
probabilities given raw scores, a result computed and thrown away."""

from __future__ import annotations

import ast
import re

from tutor.diagnosis.candidate import Candidate, Check, Ctx, at_failing_line
from tutor.diagnosis.fixes import (
    Edit,
    Fix,
    node_fix,
    replace_in_line,
    replace_node,
    replace_nodes,
)
from tutor.diagnosis.flow import Flow, call_name, receiver, target_names, text
from tutor.diagnosis.pitfalls import PURE_METHODS, TENSOR_ONLY_PURE
from tutor.diagnosis.source import method_calls
from tutor.diagnosis.verify import both, loss_improves, params_learn, runs_clean
from tutor.i18n import T
from tutor.sandbox.models import TensorSnapshot

MODULE_LIKE = re.compile(r"^[A-Z]\w*$")


def check_module_init(ctx: Ctx) -> list[Candidate]:
    """``cannot assign module before Module.__init__() call``: the class's ``__init__``
    never called ``super().__init__()``."""
    if "before Module.__init__() call" not in ctx.message:
        return []
    fail = ctx.fail_line or 0
    init = next((n for n in ast.walk(ctx.flow.tree) if isinstance(n, ast.FunctionDef)
                 and n.name == "__init__" and n.lineno <= fail <= (n.end_lineno or 0)), None)
    if init is None or not init.body:
        return []
    body = init.body[1:] if isinstance(init.body[0], ast.Expr) and isinstance(
        getattr(init.body[0], "value", None), ast.Constant) and len(init.body) > 1 \
        else init.body  # after a docstring
    edit = Edit("insert_before", body[0].lineno, "super().__init__()")
    return [Candidate("module-init-not-called", init.lineno, 0.85, [
        ("init-skipped", {"line": init.lineno, "fail_line": fail})],
        [Fix((edit,), runs_clean, T(
            f"call `super().__init__()` first in `__init__` (line {init.lineno})",
            f"在 `__init__`（第 {init.lineno} 行）里先调用 `super().__init__()`"))],
        {"line": init.lineno})]


def check_view_contiguous(ctx: Ctx) -> list[Candidate]:
    if "view size is not compatible with input tensor's size and stride" not in ctx.message:
        return []
    line, stmt = ctx.failing_statement()
    views = method_calls(stmt, "view")
    describe = T(f"use `.reshape(...)` on line {line}: it copies when the memory layout "
                 "(after a transpose or permute) does not allow a view",
                 f"第 {line} 行改用 `.reshape(...)`："
                 "内存布局（转置或 permute 之后）不允许 view 时它会复制")
    return at_failing_line(ctx, "view-not-contiguous", "not-contiguous", [
        node_fix(ctx.code, call.func, f"{text(call.func.value)}.reshape", runs_clean, describe)
        for call in views[:1] if isinstance(call.func, ast.Attribute)])


def check_backward_number(ctx: Ctx) -> list[Candidate]:
    """``'float' object has no attribute 'backward'``: the loss became a Python number on
    the way (``.item()``, ``float(...)``), here or in the function that returned it."""
    if not re.search(r"'(float|int)' object has no attribute 'backward'", ctx.message):
        return []
    flow, fail = ctx.flow, ctx.fail_line or 0
    stmt = flow.statement_at(fail)
    call = next((n for n in ast.walk(stmt) if isinstance(n, ast.Call)
                 and call_name(n) == "backward"), None) if stmt is not None else None
    target = receiver(call) if call is not None else None
    if not target:
        return []
    made = flow.assigned_before(target, fail, stmt) or flow.assigned_before(target, fail)
    places = [made] if made is not None else []
    value = flow.value_of(made) if made is not None else None
    out = []
    if isinstance(value, ast.Call):  # loss = compute(...): the function's return
        places.extend(_returns(flow, call_name(value)))
        out += _number_returned(ctx, call_name(value), target, fail)
    for place in places:
        numbers = [n for n in ast.walk(place) if isinstance(n, ast.Call) and (
            (call_name(n) == "item" and not n.args) or (
                isinstance(n.func, ast.Name) and n.func.id == "float" and len(n.args) == 1))]
        for node in numbers[:1]:
            inner = receiver(node) if call_name(node) == "item" else text(node.args[0])
            edit = replace_node(ctx.code, node, inner or "")
            if edit is None:
                continue
            line = node.lineno
            out.append(Candidate("backward-on-python-number", line, 0.85, [
                ("number-made", {"line": line, "name": target, "fail_line": fail})],
                [Fix((edit,), runs_clean, T(
                    f"keep the loss a tensor on line {line} (`{inner}`); use `.item()` only to "
                    "print it",
                    f"第 {line} 行让损失保持为张量（`{inner}`）；只在打印时用 `.item()`"))],
                {"line": line, "name": target}))
    return out


def _number_returned(ctx: Ctx, function: str, target: str, fail: int) -> list[Candidate]:
    """``return 0`` in the learner's loss function (the batch without targets, the edge
    case): a number with no graph. The fix tried returns a zero that is part of the graph,
    made from one of the function's tensor arguments."""
    defined = next((f for f in ast.walk(ctx.flow.tree) if isinstance(f, ast.FunctionDef)
                    and f.name == function), None)
    if defined is None:
        return []
    params = [a.arg for a in defined.args.args if a.arg not in ("self", "cls")]
    out = []
    for ret in ast.walk(defined):
        if not isinstance(ret, ast.Return):
            continue
        number = ret.value
        if not isinstance(number, ast.Constant) or isinstance(number.value, bool) or \
                not isinstance(number.value, (int, float)):
            continue
        fixes = []
        for param in params[:2]:
            zero = f"({param} * 0).sum()"
            edit = replace_node(ctx.code, number, zero)
            if edit is not None:
                fixes.append(Fix((edit,), runs_clean, T(
                    f"return a tensor on line {ret.lineno} in this case too: `{zero}` is 0 and "
                    f"part of the graph, so `{target}.backward()` runs and changes nothing "
                    "(or skip the step for such a batch)",
                    f"第 {ret.lineno} 行在这种情况下也返回张量：`{zero}` 等于 0 且在计算图里，"
                    f"`{target}.backward()` 能运行且不改变任何东西（或者跳过这样的 batch）")))
        out.append(Candidate("backward-on-python-number", ret.lineno, 0.85, [
            ("number-returned", {"line": ret.lineno, "name": target, "fail_line": fail,
                                 "op": function, "expr": text(number)})],
            fixes, {"line": ret.lineno, "name": target}))
    return out


def check_result_discarded(ctx: Ctx) -> list[Candidate]:
    """A statement that is only arithmetic or a comparison (``x - self.fc(x)``,
    ``loss == loss + penalty``): Python computes it and throws it away, where an assignment
    was meant (a ``-`` or ``==`` typed for ``=``). Offered where the run failed at or after
    it; the fix is tried."""
    fail = ctx.fail_line or 0
    if not fail:
        return []
    out = []
    for stmt in ctx.flow.statements:
        value = stmt.value if isinstance(stmt, ast.Expr) else None
        if stmt.lineno > fail or not isinstance(value, (ast.BinOp, ast.Compare)):
            continue
        left = value.left
        if not isinstance(left, (ast.Name, ast.Attribute, ast.Subscript)):
            continue
        name, whole = text(left), text(value)
        typed = (isinstance(value, ast.BinOp) and isinstance(value.op, ast.Sub)) or (
            isinstance(value, ast.Compare) and len(value.ops) == 1
            and isinstance(value.ops[0], ast.Eq))
        right = value.right if isinstance(value, ast.BinOp) else value.comparators[0]
        # the typo's fix first (`x = f(x)`), then the whole kept (`x = x + penalty`)
        news = ([f"{name} = {text(right)}"] if typed else []) + (
            [f"{name} = {whole}"] if isinstance(value, ast.BinOp) else [])
        fixes = []
        for new in news:
            edit = replace_node(ctx.code, stmt, new)
            if edit is not None:
                fixes.append(Fix((edit,), runs_clean, T(
                    f"assign the result on line {stmt.lineno}: `{new}`",
                    f"第 {stmt.lineno} 行把结果赋值：`{new}`")))
        fill = {"line": stmt.lineno, "name": name, "expr": whole}
        out.append(Candidate("result-discarded", stmt.lineno, 0.8 if stmt.lineno == fail else 0.6,
                             [("result-discarded", fill)], fixes, fill))
    return out


def check_conversion_discarded(ctx: Ctx) -> list[Candidate]:
    """A line that only converts a tensor (``eye.to(vertices)``, ``x.float()``,
    ``x.unsqueeze(0)``): the method returns a new tensor and leaves the name as it was, so
    the code after it goes on with the old one, and the failing line uses it. The fix assigns
    the result, and is tried."""
    fail = ctx.fail_line or 0
    failing = ctx.flow.statement_at(fail) if fail else None
    if failing is None or ctx.error is None:
        return []
    # names whose values flow into the failing line (it uses them, or a line its values
    # come from does) and that hold a tensor when it fails (a module's .to() moves the
    # module itself: it is not one of them)
    direct = {n.id for n in ast.walk(failing) if isinstance(n, ast.Name)}
    feeding = {line for name in direct for line in ctx.flow.slice_lines(name, fail)}
    flowing = direct | {n.id for line in feeding
                        if (stmt := ctx.flow.statement_at(line)) is not None
                        for n in ast.walk(ctx.flow.value_of(stmt) or stmt)
                        if isinstance(n, ast.Name)}
    used = {name for name in flowing if isinstance(ctx.error.locals.get(name), TensorSnapshot)}
    out = []
    for stmt in ctx.flow.statements:
        value = stmt.value if isinstance(stmt, ast.Expr) else None
        if stmt.lineno >= fail or not isinstance(value, ast.Call) or not isinstance(
                value.func, ast.Attribute) or value.func.attr not in RETURNS_NEW:
            continue
        owner = value.func.value
        if not isinstance(owner, ast.Name) or owner.id not in used:
            continue
        if ctx.flow.scope_of(stmt) is not ctx.flow.scope_of(failing):
            continue  # another function's name of the same spelling
        name, whole = owner.id, text(value)
        edit = replace_node(ctx.code, stmt, f"{name} = {whole}")
        fixes = [Fix((edit,), runs_clean, T(
            f"assign the result on line {stmt.lineno}: `{name} = {whole}`",
            f"第 {stmt.lineno} 行把结果赋值：`{name} = {whole}`"))] if edit is not None else []
        fill = {"line": stmt.lineno, "name": name, "expr": whole, "fail_line": fail}
        # a line with no effect at all, on a name the failing line uses: first to try
        out.append(Candidate("conversion-discarded", stmt.lineno, 0.95,
                             [("conversion-discarded", fill)], fixes, fill))
    return out


RETURNS_NEW = PURE_METHODS | TENSOR_ONLY_PURE
"""Tensor methods that return a new value and leave the tensor they are called on as it was
(a module's ``.to()``/``.cuda()`` moves the module itself: only a name the failing line's
values come from that holds a tensor is considered, and the fix is tried)."""


def _returns(flow: Flow, function: str) -> list[ast.stmt]:
    return [r for f in ast.walk(flow.tree) if isinstance(f, ast.FunctionDef)
            and f.name == function for r in ast.walk(f) if isinstance(r, ast.Return)]


def check_bce_range(ctx: Ctx) -> list[Candidate]:
    """BCELoss given raw scores: the loss that takes scores is BCEWithLogitsLoss."""
    if "all elements of input should be between 0 and 1" not in ctx.message:
        return []
    failed = ctx.evidence.failed
    module = failed.module if failed is not None else None
    call = ctx.flow.constructor(module, "BCELoss") if module else None
    if call is None:
        stmt = ctx.flow.statement_at(ctx.fail_line or 0)
        call = next((n for n in ast.walk(stmt) if isinstance(n, ast.Call) and call_name(n) in (
            "binary_cross_entropy", "BCELoss")), None) if stmt is not None else None
    if call is None:
        return []
    given = failed.inputs[0] if failed is not None and failed.inputs else None
    if given is not None and given.op in ("tanh", "tanh_") and given.line:
        # the values come from tanh, in (-1, 1): not scores, and a loss that takes scores
        # would run only by squashing them again; the output layer is the one to change
        line = given.line
        edit = replace_in_line(ctx.code, line, r"\b(?:torch\.|F\.|self\.)?tanh\(",
                               "torch.sigmoid(")
        return [Candidate("bce-given-tanh", line, 0.85, [
            ("tanh-not-probabilities", {"line": line, "name": given.name or "its input",
                                        "fail_line": ctx.fail_line or 0})],
            [Fix((edit,), runs_clean, T(
                f"end with a sigmoid instead of tanh on line {line}, so the values are in "
                "[0, 1] as the loss wants: `torch.sigmoid(...)`",
                f"第 {line} 行最后用 sigmoid 代替 tanh，使数值落在损失要求的 [0, 1] 之间："
                "`torch.sigmoid(...)`"))] if edit else [], {"line": line})]
    new_name = {"BCELoss": "BCEWithLogitsLoss",
                "binary_cross_entropy": "binary_cross_entropy_with_logits"}[call_name(call)]
    func = text(call.func)
    edit = replace_node(ctx.code, call.func, func[: -len(call_name(call))] + new_name)
    line = call.lineno
    return [Candidate("bce-input-range", line, 0.8, [
        ("scores-not-probabilities", {"line": line, "fail_line": ctx.fail_line or 0})],
        [Fix((edit,), runs_clean, T(
            f"use `{new_name}` on line {line}: it takes the raw scores and applies the sigmoid "
            "itself", f"第 {line} 行改用 `{new_name}`：它接收原始分数并自己做 sigmoid"))]
        if edit else [], {"line": line})]


def _unregistered_shows(ctx: Ctx) -> bool | None:
    """Whether the run shows layers the model does not register: True for "optimizer got an
    empty parameter list", False for parameters the loss reaches that no optimizer holds (not
    held in a plain container: accounting_checks.check_held_in_container names those), None
    for neither."""
    empty = "optimizer got an empty parameter list" in ctx.message
    idle = any(p.reached and not p.in_optimizer and p.requires_grad and not p.held_in
               for p in ctx.evidence.params)
    return empty if empty or idle else None


def check_layers_in_list(ctx: Ctx) -> list[Candidate]:
    """Layers kept in a plain list attribute: the model does not register them, so
    ``parameters()`` misses them (the optimizer never updates them, or gets nothing)."""
    empty = _unregistered_shows(ctx)
    if empty is None:
        return []
    out = []
    for stmt in ctx.flow.statements:
        if not isinstance(stmt, ast.Assign) or not any(
                text(t).startswith("self.") for t in stmt.targets):
            continue
        value = stmt.value
        elements = value.elts if isinstance(value, ast.List) else (
            [value.elt] if isinstance(value, ast.ListComp) else [])
        # the function's local layers are looked up only for a list that holds names
        built = _layers_built_in(ctx.flow.scope_of(stmt)) if any(
            isinstance(e, ast.Name) for e in elements) else {}
        if not elements or not all(
                (isinstance(e, ast.Call) and MODULE_LIKE.match(call_name(e)))
                or (isinstance(e, ast.Name) and e.id in built) for e in elements):
            continue
        edit = replace_node(ctx.code, value, f"nn.ModuleList({text(value)})")
        name = ", ".join(n for t in stmt.targets for n in target_names(t))
        expect = runs_clean if empty else both(params_learn([]), loss_improves)
        out.append(Candidate("optimizer-empty-params" if empty else "optimizer-wrong-params",
                             stmt.lineno, 0.9, [
                                 ("layers-in-list", {"line": stmt.lineno, "name": name})],
                             [Fix((edit,), expect, T(
                                 f"keep the layers in `nn.ModuleList(...)` on line {stmt.lineno}"
                                 ": a plain list hides them from `parameters()`",
                                 f"第 {stmt.lineno} 行用 `nn.ModuleList(...)` 保存这些层："
                                 "普通列表会让 `parameters()` 看不到它们"))] if edit else [],
                             {"line": stmt.lineno, "name": name}))
    return out


def _layers_built_in(function: ast.AST) -> dict[str, ast.Assign]:
    """Local names bound to a layer (``fc1 = nn.Linear(4, 8)``) in ``function``: the layers
    a list of names may hold (none outside a function)."""
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return {}
    out: dict[str, ast.Assign] = {}
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(
                node.targets[0], ast.Name) and isinstance(node.value, ast.Call) and \
                MODULE_LIKE.match(call_name(node.value)):
            out.setdefault(node.targets[0].id, node)
    return out


def _held_by(value: ast.expr) -> set[str]:
    """The names ``self.x = value`` keeps: the name itself, a container's elements (a plain
    list is :func:`check_layers_in_list`'s), a container layer's arguments
    (``nn.Sequential(fc1, fc2)``); not names a lambda or another call only uses."""
    if isinstance(value, ast.Name):
        return {value.id}
    if isinstance(value, (ast.List, ast.Tuple, ast.Set)):
        return {n for e in value.elts for n in _held_by(e)}
    if isinstance(value, ast.Dict):
        return {n for v in value.values for n in _held_by(v)}
    if isinstance(value, ast.Call) and MODULE_LIKE.match(call_name(value)):
        return {n for a in value.args for n in _held_by(a)}
    return set()


def check_layers_in_locals(ctx: Ctx) -> list[Candidate]:
    """Layers a module's ``__init__`` builds into local names and never puts on ``self``
    (``fc1 = nn.Linear(...)``; ``self_fc1 = ...``, a typo for ``self.fc1``): the module does not
    register them, so ``parameters()`` misses them. Every such name of one ``__init__`` becomes
    an attribute in the one change (its uses in ``__init__`` too), and the change is tried."""
    empty = _unregistered_shows(ctx)
    if empty is None:
        return []
    out = []
    for init in ast.walk(ctx.flow.tree):
        if not (isinstance(init, ast.FunctionDef) and init.name == "__init__" and isinstance(
                ctx.flow.scope_of(init), ast.ClassDef)):
            continue
        built = _layers_built_in(init)
        stored = {name for node in ast.walk(init) if isinstance(node, ast.Assign)
                  and any(text(t).startswith("self.") for t in node.targets)
                  for name in _held_by(node.value)}
        # given to one of self's methods: self.add_module(...), self.blocks.append(layer)
        stored |= {name for call in ast.walk(init) if isinstance(call, ast.Call)
                   and text(call.func).startswith("self.")
                   for arg in call.args for name in _held_by(arg)}
        unregistered = {name: stmt for name, stmt in built.items() if name not in stored}
        if not unregistered:
            continue
        taken = {t.attr for node in ast.walk(ctx.flow.scope_of(init))
                 if isinstance(node, ast.Assign) for t in node.targets
                 if isinstance(t, ast.Attribute) and text(t.value) == "self"}
        attrs = {name: name.removeprefix("self_") or name for name in unregistered}
        # an attribute of that name is already something else (self.head = lambda ...)
        attrs = {name: f"{attr}_layer" if attr in taken and not name.startswith("self_")
                 else attr for name, attr in attrs.items()}
        changes: dict[int, list[tuple[ast.AST, str]]] = {}
        for node in ast.walk(init):
            if isinstance(node, ast.Name) and node.id in attrs:
                changes.setdefault(node.lineno, []).append((node, f"self.{attrs[node.id]}"))
        edits = [replace_nodes(ctx.code, nodes) for nodes in changes.values()]
        first = min(stmt.lineno for stmt in unregistered.values())
        names = ", ".join(f"`{n}`" for n in list(unregistered)[:3])
        shown = ", ".join(f"`self.{attrs[n]}`" for n in list(unregistered)[:3])
        facts = {"line": first, "name": names}
        expect = runs_clean if empty else both(params_learn([]), loss_improves)
        fixes = [Fix(tuple(e for e in edits if e is not None), expect, T(
            f"make them attributes ({shown}): a layer in a local variable of `__init__` is "
            "not registered, so `parameters()` leaves it out",
            f"把它们改成属性（{shown}）：`__init__` 里局部变量中的层不会被注册，"
            "`parameters()` 不包含它们"))] if all(e is not None for e in edits) else []
        out.append(Candidate("optimizer-empty-params" if empty else "optimizer-wrong-params",
                             first, 0.85, [("layers-in-locals", facts)], fixes, facts))
    return out


def check_tensor_from_tensors(ctx: Ctx) -> list[Candidate]:
    """``torch.tensor(list of tensors)``: stack them instead."""
    if "only one element tensors can be converted to Python scalars" not in ctx.message:
        return []
    line, stmt = ctx.failing_statement()
    maker = next((n for n in ast.walk(stmt) if isinstance(n, ast.Call) and call_name(n) in (
        "tensor", "Tensor", "FloatTensor", "as_tensor") and n.args), None) if stmt else None
    if maker is None:
        return []
    new = f"torch.stack({text(maker.args[0])})"
    return at_failing_line(ctx, "tensor-from-tensors", "tensors-listed", [node_fix(
        ctx.code, maker, new, runs_clean, T(f"stack the tensors on line {line}: `{new}`",
                                            f"第 {line} 行把这些张量堆叠起来：`{new}`"))])


TORCH_NN = ("nn", "torch.nn")


def check_module_with_tensors(ctx: Ctx) -> list[Candidate]:
    """A layer or loss *class* called with the data (``nn.CrossEntropyLoss(output, labels)``):
    its constructor takes options, so whatever it raises (a tensor's truth value asked for,
    a size that is a tensor), the cause is that the object was never built. Build it, then
    call it. Found from the call and the failing frame's locals, not from the message."""
    line, stmt = ctx.failing_statement()
    known = ctx.error.locals if ctx.error is not None else {}
    if stmt is None or not known:
        return []
    imported = _imported_from_nn(ctx.flow)
    out = []
    for call in (n for n in ast.walk(stmt) if isinstance(n, ast.Call)):
        func = text(call.func)
        prefix, _, name = func.rpartition(".")
        if not MODULE_LIKE.match(name) or not (prefix in TORCH_NN or (
                not prefix and name in imported)) or call.keywords:
            continue
        data = [a for a in call.args if isinstance(a, ast.Name)
                and getattr(known.get(a.id), "kind", None) == "tensor"]
        if not data or len(data) != len(call.args):
            continue
        args = ", ".join(text(a) for a in call.args)
        built = f"{func}()({args})"
        out.append(Candidate("module-called-with-tensors", line, 0.9, [
            ("class-given-data", {"line": line, "module": func, "name": args})],
            [f for f in [node_fix(ctx.code, call, built, runs_clean, T(
                f"build `{func}` first, then call it on the tensors (line {line}): `{built}`",
                f"第 {line} 行先构建 `{func}`，再用它处理这些张量：`{built}`"))] if f],
            {"line": line, "module": func, "name": args, "detail": built}))
    return out


def _imported_from_nn(flow: Flow) -> set[str]:
    """Names the program imports from ``torch.nn`` (``from torch.nn import MSELoss``)."""
    return {alias.asname or alias.name for node in ast.walk(flow.tree)
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("torch.nn")
            for alias in node.names}


EXCEPTION_CHECKS: tuple[Check, ...] = (check_module_init, check_view_contiguous,
                                       check_backward_number, check_bce_range, check_layers_in_list,
                                       check_layers_in_locals,
                                       check_tensor_from_tensors, check_module_with_tensors,
                                       check_result_discarded, check_conversion_discarded)
SILENT_CHECKS: tuple[Check, ...] = (check_layers_in_list, check_layers_in_locals)

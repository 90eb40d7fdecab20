"""Common messages whose cause is on another line than the one that failed: a name assigned
before it is registered, a tensor stretched by ``expand`` from a size it does not have, an
in-place op whose target is smaller or of another kind than its result, a recurrent state made
for another batch, a ``ModuleList`` called like a layer, a ``OneCycleLR`` built for fewer steps
than the training takes, float labels given to ``one_hot``.

Each check reads the message's numbers and names, the run's operands (where each was made)
and the source, and proposes the change that fits where the cause is; a change is shown only
where its re-run worked (:class:`tutor.diagnosis.fixes.Fix`).
"""

from __future__ import annotations

import ast
import re

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import (
    Edit,
    Fix,
    indent_of,
    node_fix,
    postfix,
    replace_node,
    replace_nodes,
)
from tutor.diagnosis.flow import call_name, module_label, text
from tutor.diagnosis.lineage import Lineage, shape_text
from tutor.diagnosis.operand_checks import failed_op
from tutor.diagnosis.verify import runs_clean
from tutor.i18n import T, Text
from tutor.sandbox.models import OperandEvidence

CREATIONS = frozenset({"tensor", "zeros", "ones", "full", "empty", "arange", "randint",
                       "as_tensor", "linspace", "eye"})
"""torch functions that make a tensor and take a ``dtype=``."""
FILLED = frozenset({"zeros", "ones", "full", "empty"})
"""Creations whose sizes say only the shape (an accumulator, a state): made another shape,
nothing else of the program changes."""
CONVERSIONS = frozenset({"float", "double", "half", "long", "int", "short", "bool", "byte"})


def _said(name: str | None) -> str:
    """The learner's name for an operand (the checks give no candidate for one the run
    could not name: their words name it)."""
    return name or ""


def _statement_on(ctx: Ctx, line: int) -> ast.stmt | None:
    """The innermost statement spanning ``line``."""
    spanning = [s for s in ctx.flow.statements if s.lineno <= line <= (s.end_lineno or s.lineno)]
    return spanning[-1] if spanning else None


def _call_on(ctx: Ctx, line: int, op: str | None) -> ast.Call | None:
    """The call of ``op`` on ``line`` (where the run saw an operand made)."""
    stmt = _statement_on(ctx, line)
    if stmt is None or not op:
        return None
    return next((n for n in ast.walk(stmt) if isinstance(n, ast.Call) and call_name(n) == op),
                None)


def _with_dtype(ctx: Ctx, call: ast.Call, dtype: str) -> Edit | None:
    """``call`` (a torch creation) made with ``dtype=...``: its own ``dtype`` replaced, or
    one added."""
    if call_name(call) not in CREATIONS or "torch" not in ctx.flow.imported:
        return None
    given = next((k for k in call.keywords if k.arg == "dtype"), None)
    if given is not None:
        return replace_node(ctx.code, given.value, dtype)
    shown = text(call)
    if not shown.endswith(")") or call.lineno != call.end_lineno:
        return None
    sep = ", " if call.args or call.keywords else ""
    return replace_node(ctx.code, call, f"{shown[:-1]}{sep}dtype={dtype})")


def _converted(ctx: Ctx, line: int, method: str) -> Edit | None:
    """The value the statement on ``line`` assigns made of another kind: its own conversion
    (``(...).float()``) changed, or ``.method()`` appended."""
    stmt = _statement_on(ctx, line)
    value = ctx.flow.value_of(stmt) if stmt is not None else None
    if value is None or value.lineno != value.end_lineno:
        return None
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and \
            value.func.attr in CONVERSIONS and not value.args:
        return replace_node(ctx.code, value, postfix(value.func.value, f".{method}()"))
    return replace_node(ctx.code, value, postfix(value, f".{method}()"))


def _made_as(ctx: Ctx, operand: OperandEvidence, dtype: str, method: str,
             words: Text) -> Fix | None:
    """The operand made of the kind ``dtype`` where the run saw it made."""
    if operand.line is None:
        return None
    call = _call_on(ctx, operand.line, operand.op)
    edit = _with_dtype(ctx, call, dtype) if call is not None else None
    if edit is None:
        edit = _converted(ctx, operand.line, method)
    if edit is None:
        return None
    new = edit.text.strip()
    return Fix((edit,), runs_clean, T(
        f"make `{_said(operand.name)}` {words.en} where it is made, on line {operand.line}: "
        f"`{new}`",
        f"在第 {operand.line} 行创建 `{_said(operand.name)}` 时就把它做成{words.zh}：`{new}`"))


def _out_of_place(ctx: Ctx, stmt: ast.stmt, line: int) -> Fix | None:
    """``x += y`` written ``x = x + y`` (``x.add_(y)``: ``x = x.add(y)``): a new tensor of
    the result's shape and kind, in place of writing into ``x``."""
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name) and \
            stmt.lineno == stmt.end_lineno:
        op = ast.BinOp(stmt.target, stmt.op, stmt.value)
        right = text(stmt.value)
        if isinstance(stmt.value, (ast.BinOp, ast.BoolOp, ast.Compare, ast.IfExp)):
            right = f"({right})"
        symbol = ast.unparse(op).split(" ")[1]
        new = f"{text(stmt.target)} = {text(stmt.target)} {symbol} {right}"
    elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and isinstance(
            stmt.value.func, ast.Attribute) and stmt.value.func.attr.endswith("_") and \
            isinstance(stmt.value.func.value, ast.Name) and stmt.lineno == stmt.end_lineno:
        call = stmt.value
        target = text(call.func.value)  # type: ignore[attr-defined]
        args = ", ".join(text(a) for a in [*call.args, *call.keywords])
        new = f"{target} = {target}.{call.func.attr[:-1]}({args})"  # type: ignore[attr-defined]
    else:
        return None
    whole = ctx.flow.line(line)
    edit = Edit("replace", line, indent_of(whole) + new)
    return Fix((edit,), runs_clean, T(
        f"on line {line} compute out of place, a new tensor of the result's shape and kind: "
        f"`{new}`",
        f"第 {line} 行改为非原地计算，得到一个形状和类型都与结果相符的新张量：`{new}`"))


# -- an attribute assigned, then registered under its name ------------------------------------
ALREADY = re.compile(r"attribute '(?P<name>\w+)' already exists")
REGISTERS = frozenset({"register_buffer", "register_parameter"})


def check_registered_after_assigned(ctx: Ctx) -> list[Candidate]:
    """``self.mem = torch.zeros(...)`` and then ``self.register_buffer("mem", ...)``: the
    plain assignment made ``mem`` an ordinary attribute, and a name taken cannot be
    registered. The cause is that assignment; the change registers the value directly."""
    found = ALREADY.search(ctx.message)
    line, stmt = ctx.failing_statement()
    if found is None or stmt is None:
        return []
    name = found["name"]
    call = next((n for n in ast.walk(stmt) if isinstance(n, ast.Call)
                 and call_name(n) in REGISTERS and n.args
                 and isinstance(n.args[0], ast.Constant) and n.args[0].value == name), None)
    if call is None or not isinstance(call.func, ast.Attribute):
        return []
    owner = text(call.func.value)
    method = ctx.flow.function_at(line)
    scope = method if method is not None else ctx.flow.tree
    assigned = [s for s in ast.walk(scope) if isinstance(s, ast.Assign)
                and s.lineno < line and len(s.targets) == 1
                and text(s.targets[0]) == f"{owner}.{name}"]
    if not assigned:
        return []
    earlier = max(assigned, key=lambda s: s.lineno)
    root = earlier.lineno
    fill: dict[str, object] = {"line": root, "fail_line": line, "name": name,
                               "op": call_name(call), "expr": text(earlier.value)}
    fixes = []
    value = call.args[1] if len(call.args) >= 2 else None
    if earlier.lineno == earlier.end_lineno and value is not None:
        reads = [n for n in ast.walk(value) if isinstance(n, ast.Attribute)
                 and text(n) == f"{owner}.{name}"]
        bare = text(earlier.value)
        wrapped = f"({bare})" if isinstance(
            earlier.value, (ast.BinOp, ast.BoolOp, ast.IfExp, ast.Compare)) else bare
        edit = replace_nodes(ctx.code, [
            (r, bare if isinstance(ctx.flow.parents.get(r), ast.Call) else wrapped)
            for r in reads]) if reads else None
        if edit is not None or not reads:
            new = edit.text.strip() if edit is not None else text(stmt)
            edits = (Edit("delete", root), *((edit,) if edit is not None else ()))
            fixes.append(Fix(edits, runs_clean, T(
                f"register the value directly: drop the plain assignment on line {root}, and "
                f"on line {line} `{new}`",
                f"直接注册这个值：删掉第 {root} 行的普通赋值，第 {line} 行写成 `{new}`")))
    return [Candidate("assigned-before-registered", root, 0.85,
                      [("assigned-plain", fill), ("register-taken", fill)], fixes, fill)]


# -- expand given a size the tensor does not have -------------------------------------------------
EXPANDED = re.compile(r"The expanded size of the tensor \((?P<want>-?\d+)\) must match the "
                      r"existing size \((?P<have>\d+)\) at non-singleton dimension "
                      r"(?P<dim>\d+)\.\s+Target sizes: \[(?P<target>[-\d, ]*)\]\.\s+Tensor "
                      r"sizes: \[(?P<sizes>[\d, ]*)\]")


def check_expand_size(ctx: Ctx) -> list[Candidate]:
    """``expand`` (``expand_as``, ``broadcast_to``) stretches only dimensions of size 1: the
    tensor has another size in the dimension the target asks to stretch. Names the tensor,
    both sizes, and where its size came from; which of the two is meant is the learner's to
    say, so no change is proposed."""
    found = EXPANDED.search(ctx.message)
    failed = failed_op(ctx)
    if found is None or failed is None or not failed.inputs:
        return []
    tensor = failed.inputs[0]
    if not tensor.name:
        return []
    sizes = [int(v) for v in found["sizes"].split(",") if v.strip()]
    target = [int(v) for v in found["target"].split(",") if v.strip()]
    dim = int(found["dim"]) - (len(target) - len(sizes))
    if tensor.shape != sizes or not 0 <= dim < len(sizes):
        return []
    line = ctx.fail_line or failed.line
    have, want = int(found["have"]), int(found["want"])
    fill: dict[str, object] = {"line": line, "fail_line": line, "name": _said(tensor.name),
                               "shape": shape_text(sizes), "target_shape": shape_text(target),
                               "count": have, "numel": want, "dim": dim, "op": failed.op}
    steps: list[tuple[str, dict[str, object]]] = [("expand-size", fill)]
    origin = Lineage(tensor).origin(dim, have)
    if origin is not None:
        where = origin.link.layer or origin.link.module
        steps.append(("size-from", {"name": _said(tensor.name), "shape": shape_text(sizes),
                                    "count": have, "line": origin.line, "op": origin.op,
                                    "module": module_label(where) if where else None}))
    return [Candidate("expand-size-mismatch", line, 0.8, steps, [], fill, pinned=True)]


# -- an in-place op whose target cannot hold its result ------------------------------------------
OUTPUT_SHAPE = re.compile(r"output with shape \[(?P<out>[\d, ]*)\] doesn't match the "
                          r"broadcast shape \[(?P<result>[\d, ]*)\]")


def _inplace_target(ctx: Ctx) -> tuple[int, ast.stmt, OperandEvidence] | None:
    """The failing line's in-place op and the tensor it writes into, as the run saw it."""
    failed = failed_op(ctx)
    line, stmt = ctx.failing_statement()
    if failed is None or stmt is None or not failed.op.endswith("_") or not failed.inputs:
        return None
    target = failed.inputs[0]
    return (line, stmt, target) if target.arg == "0" and target.name else None


def _reshaped(call: ast.Call, shape: list[int]) -> str | None:
    """A ``zeros``/``ones``/``empty``/``full`` call made with the sizes ``shape`` (its fill
    value and keywords kept)."""
    if not call.args or call.lineno != call.end_lineno or any(
            isinstance(a, ast.Starred) for a in call.args):
        return None
    sizes = ", ".join(map(str, shape))
    keywords = "".join(f", {text(k)}" for k in call.keywords)
    if call_name(call) == "full":
        if len(call.args) != 2:
            return None
        return f"{text(call.func)}(({sizes}{',' if len(shape) == 1 else ''}), " \
            f"{text(call.args[1])}{keywords})"
    return f"{text(call.func)}({sizes}{keywords})"


def check_inplace_too_small(ctx: Ctx) -> list[Candidate]:
    """``total += row`` with ``total`` made smaller than the result (``torch.zeros(1)``
    summing rows of 4): an in-place op writes its result into its target, which cannot grow.
    The cause is where the target was made; the changes make it the result's shape there
    (a tensor made only for its shape), or compute out of place."""
    found = OUTPUT_SHAPE.search(ctx.message)
    place = _inplace_target(ctx)
    if found is None or place is None:
        return []
    line, stmt, target = place
    result = [int(v) for v in found["result"].split(",") if v.strip()]
    if target.shape != [int(v) for v in found["out"].split(",") if v.strip()]:
        return []
    root = target.line or line
    call = _call_on(ctx, root, target.op) if target.op in FILLED else None
    new = _reshaped(call, result) if call is not None else None
    reshaped = node_fix(ctx.code, call, new, runs_clean, T(
        f"make `{_said(target.name)}` of the result's shape {shape_text(result)} where it is "
        f"made, on line {root}: `{new}`",
        f"在第 {root} 行创建 `{_said(target.name)}` 时就让它具有结果的形状 "
        f"{shape_text(result)}：`{new}`")) if call is not None and new is not None else None
    fixes = [f for f in (reshaped, _out_of_place(ctx, stmt, line)) if f is not None]
    fill: dict[str, object] = {"line": root, "fail_line": line, "name": _said(target.name),
                               "shape": shape_text(target.shape),
                               "target_shape": shape_text(result), "op": target.op or "",
                               "expr": text(stmt)}
    return [Candidate("inplace-target-too-small", root, 0.8,
                      [("inplace-target-shape", fill)], fixes, fill)]


CAST = re.compile(r"result type (?P<given>Float|Double|Half|BFloat16) can't be cast to the "
                  r"desired output type (?P<wanted>Long|Int|Short|Char|Byte|Bool)")


def check_inplace_into_integers(ctx: Ctx) -> list[Candidate]:
    """``counts /= counts.sum()`` with ``counts`` integers: an in-place op keeps its
    target's dtype, and a float result does not fit integers. The cause is where the
    integer tensor was made; the changes make it float there, or compute out of place."""
    found = CAST.search(ctx.message)
    place = _inplace_target(ctx)
    if found is None or place is None:
        return []
    line, stmt, target = place
    if "int" not in target.dtype and "bool" not in target.dtype:
        return []
    root = target.line or line
    fixes = [f for f in (_made_as(ctx, target, "torch.float32", "float",
                                  T("a float tensor", "浮点张量")),
                         _out_of_place(ctx, stmt, line)) if f is not None]
    fill: dict[str, object] = {"line": root, "fail_line": line, "name": _said(target.name),
                               "given": f"`{target.dtype}`", "op": target.op or "",
                               "expr": text(stmt),
                               "dtype": T(found["given"].lower(), "浮点")}
    return [Candidate("inplace-into-integers", root, 0.8, [("integer-target", fill)], fixes,
                      fill)]


# -- a recurrent layer's initial state made for another batch -------------------------------------
HIDDEN = re.compile(r"Expected hidden(?:\[\d\])? size \((?P<want>[\d, ]+)\), got "
                    r"\[(?P<got>[\d, ]+)\]")


def check_state_for_another_batch(ctx: Ctx) -> list[Candidate]:
    """``h0 = torch.zeros(1, 4, 20)`` given to an LSTM whose input has a batch of 8: the
    state's batch size was written as a number where it was made (a size held in a name is
    :mod:`tutor.diagnosis.size_checks`' question). The change takes it from the input
    (``x.size(0)`` with ``batch_first``), where the input is in reach, or makes the state
    just before the call."""
    found = HIDDEN.search(ctx.message)
    failed = failed_op(ctx)
    if found is None or failed is None or len(failed.inputs) < 2:
        return []
    want = [int(v) for v in found["want"].split(",")]
    got = [int(v) for v in found["got"].split(",")]
    if len(want) != 3 or len(got) != 3 or want[1] == got[1]:
        return []
    given = failed.inputs[0]
    at = 0 if failed.config.get("batch_first") else 1
    if len(given.shape) != 3 or given.shape[at] != want[1]:
        return []
    line, stmt = ctx.failing_statement()
    states = [o for o in failed.inputs[1:] if o.shape == got and o.line is not None]
    made: list[tuple[OperandEvidence, ast.Call, ast.expr]] = []
    for state in states:
        call = _call_on(ctx, state.line or 0, state.op) if state.op in FILLED else None
        if call is None or not call.args or state.line == line:
            continue
        sizes = call.args[0].elts if isinstance(call.args[0], (ast.Tuple, ast.List)) else \
            call.args
        if len(sizes) == 3 and isinstance(sizes[1], ast.Constant) and sizes[1].value == got[1]:
            made.append((state, call, sizes[1]))
    if not made or stmt is None:
        return []
    first = made[0][0]
    if not first.name or not given.name:
        return []
    root = first.line or line
    fill: dict[str, object] = {"line": root, "fail_line": line, "name": _said(first.name),
                               "count": got[1], "numel": want[1], "target": _said(given.name),
                               "shape": shape_text(given.shape), "dim": at,
                               "module": module_label(failed.module or "") or "the layer"}
    fixes: list[Fix] = []
    if given.name and re.fullmatch(r"[A-Za-z_]\w*", given.name):
        size = f"{given.name}.size({at})"
        fix = _state_sized(ctx, made, size, line, stmt)
        if fix is not None:
            fixes.append(fix)
    return [Candidate("rnn-state-batch", root, 0.8,
                      [("state-batch", fill), ("state-made", fill)], fixes, fill)]


def _state_sized(ctx: Ctx, made: list[tuple[OperandEvidence, ast.Call, ast.expr]], size: str,
                 line: int, stmt: ast.stmt) -> Fix | None:
    """The states' batch sizes taken from the input: where they are made when the input is
    bound there already, else their statements moved just before the call."""
    name = size.split(".")[0]
    lines = sorted({m[1].lineno for m in made})
    inside = ctx.flow.function_at(line)
    reachable = all(_bound_at(ctx, name, n) for n in lines)
    edits: list[Edit] = []
    for n in lines:
        edit = replace_nodes(ctx.code, [(c, size) for _, call, c in made if call.lineno == n])
        if edit is None:
            return None
        edits.append(edit)
    if reachable:
        where = " and ".join(map(str, lines))
        return Fix(tuple(edits), runs_clean, T(
            f"take the state's batch size from the input, `{size}`, on line"
            f"{'s' if len(lines) > 1 else ''} {where}",
            f"在第 {'、'.join(map(str, lines))} 行从输入取得状态的批大小：`{size}`"))
    movable = all(
        (s := _statement_on(ctx, n)) is not None and isinstance(s, ast.Assign)
        and s.lineno == s.end_lineno and ctx.flow.function_at(n) is inside
        and not ctx.flow.loops_of(s) and s.lineno < line for n in lines)
    if not movable or (ctx.flow.loops_of(stmt) and any(
            text(t) in {text(x) for x in _targets(stmt)}
            for n in lines for t in _targets(_statement_on(ctx, n)))):
        return None
    moved = [Edit("insert_before", line, e.text.strip()) for e in reversed(edits)]
    deleted = [Edit("delete", n) for n in lines]
    return Fix((*moved, *deleted), runs_clean, T(
        f"make the state just before line {line}, from the input's batch size `{size}`",
        f"在第 {line} 行之前、按输入的批大小 `{size}` 创建状态"))


def _bound_at(ctx: Ctx, name: str, line: int) -> bool:
    """``name`` can be read on ``line``: a parameter of the function that holds it, or
    assigned before it in that function (at the module's level, in the module)."""
    here = ctx.flow.function_at(line)
    if here is not None and name in {a.arg for a in [*here.args.posonlyargs, *here.args.args,
                                                     *here.args.kwonlyargs]}:
        return True
    return any(s.lineno < line and ctx.flow.function_at(s.lineno) is here
               for s in ctx.flow.assignments.get(name, []))


def _targets(stmt: ast.stmt | None) -> list[ast.expr]:
    if isinstance(stmt, ast.Assign):
        return [n for t in stmt.targets for n in ast.walk(t) if isinstance(n, ast.Name)]
    return []


# -- a container of modules called like a layer --------------------------------------------------
NO_FORWARD = re.compile(r'Module \[(?P<kind>ModuleList|ModuleDict)\] is missing the required '
                        r'"forward" function')


def check_container_called(ctx: Ctx) -> list[Candidate]:
    """``self.layers(x)`` with ``self.layers`` an ``nn.ModuleList`` (or ``ModuleDict``): a
    container holds modules and has no ``forward``; the layers run one after another only
    in a loop over it (or in an ``nn.Sequential``, which is such a loop)."""
    found = NO_FORWARD.search(ctx.message)
    line, stmt = ctx.failing_statement()
    if found is None or stmt is None:
        return []
    failed = failed_op(ctx)
    attr = (failed.module or "").split(".")[-1] if failed is not None else ""
    calls = [n for n in ast.walk(stmt) if isinstance(n, ast.Call) and len(n.args) == 1
             and not n.keywords and isinstance(n.func, (ast.Name, ast.Attribute))
             and (not attr or text(n.func).split(".")[-1] == attr)]
    if len(calls) != 1:
        return []
    call = calls[0]
    container = text(call.func)
    kind = found["kind"]
    fill: dict[str, object] = {"line": line, "fail_line": line, "name": container,
                               "module": kind, "expr": text(call)}
    fixes = [f for f in (_looped(ctx, stmt, call, container, kind, line),
                         _sequential(ctx, container, line) if kind == "ModuleList" else None)
             if f is not None]
    return [Candidate("container-called", line, 0.85, [("container-called", fill)], fixes,
                      fill)]


def _looped(ctx: Ctx, stmt: ast.stmt, call: ast.Call, container: str, kind: str,
            line: int) -> Fix | None:
    """The container's layers run in a loop just before the line, each given what the one
    before it returned; the call's place takes the last one's result. A line that only
    returns the call loops over its own input; any other keeps the input as it was."""
    arg = call.args[0]
    if stmt.lineno != stmt.end_lineno or not isinstance(arg, ast.Name):
        return None
    scope = ctx.flow.function_at(line) or ctx.flow.tree
    taken = ctx.flow.names_in(scope)
    layer = next((n for n in ("layer", "block", "module") if n not in taken), None)
    out = arg.id if isinstance(stmt, ast.Return) and stmt.value is call else next(
        (n for n in ("h", "out", "hidden") if n not in taken), None)
    edit = replace_node(ctx.code, call, out) if out is not None else None
    if layer is None or out is None or edit is None:
        return None
    items = f"{container}.values()" if kind == "ModuleDict" else container
    loop = [f"for {layer} in {items}:", f"    {out} = {layer}({out})"]
    if out != arg.id:
        loop.insert(0, f"{out} = {arg.id}")
    indent = indent_of(edit.text)
    # one edit of the line: the loop's lines, then the line with the call's place taken
    edit = Edit("replace", line, "\n".join([*(indent + row for row in loop), edit.text]))
    shown = f"{loop[-2]} {loop[-1].strip()}" if out == arg.id else \
        f"{loop[0]}; {loop[1]} {loop[2].strip()}"
    return Fix((edit,), runs_clean, T(
        f"on line {line} run the layers one after another in a loop over `{container}`: "
        f"`{shown}`",
        f"第 {line} 行用循环遍历 `{container}`，逐个运行其中的层：`{shown}`"))


def _sequential(ctx: Ctx, container: str, line: int) -> Fix | None:
    """The container made an ``nn.Sequential`` where it is built, which runs its layers in
    order when called."""
    made = [s for s in ctx.flow.statements if isinstance(s, ast.Assign) and len(s.targets) == 1
            and text(s.targets[0]) == container and isinstance(s.value, ast.Call)
            and call_name(s.value) == "ModuleList" and len(s.value.args) == 1]
    if len(made) != 1 or not isinstance(made[0].value, ast.Call):
        return None
    value = made[0].value
    func = text(value.func).replace("ModuleList", "Sequential")
    new = f"{func}(*{text(value.args[0])})"
    edit = replace_node(ctx.code, value, new)
    if edit is None:
        return None
    return Fix((edit,), runs_clean, T(
        f"on line {made[0].lineno} make it an `nn.Sequential`, which runs its layers in order "
        f"when called: `{new}`",
        f"第 {made[0].lineno} 行改用 `nn.Sequential`，调用时它会按顺序运行其中的层：`{new}`"))


# -- a one-cycle schedule built for fewer steps than the training takes --------------------------
STEPPED_PAST = re.compile(r"Tried to step (?P<taken>\d+) times?\. The specified number of "
                          r"total steps is (?P<total>\d+)")


def check_schedule_too_short(ctx: Ctx) -> list[Candidate]:
    """``OneCycleLR(..., epochs=2, steps_per_epoch=len(data) // batch_size)`` stepped once
    per batch: the floor division drops the last, partial batch, so the schedule ends before
    the training does. The cause is the scheduler's construction; the changes count every
    batch (``math.ceil``, ``len(loader)``) or the epochs the loop runs."""
    found = STEPPED_PAST.search(ctx.message)
    line, stmt = ctx.failing_statement()
    if found is None or stmt is None:
        return []
    step = next((n for n in ast.walk(stmt) if isinstance(n, ast.Call) and call_name(n) == "step"
                 and isinstance(n.func, ast.Attribute)), None)
    if step is None:
        return []
    name = text(step.func.value)  # type: ignore[attr-defined]
    made = ctx.flow.assigned_before(name, line + 1)
    value = ctx.flow.value_of(made) if made is not None else None
    if made is None or not isinstance(value, ast.Call) or call_name(value) != "OneCycleLR":
        return []
    root = made.lineno
    keywords = {k.arg: k.value for k in value.keywords if k.arg}
    fixes = [f for f in (_ceil_steps(ctx, keywords.get("steps_per_epoch"), root),
                         _loader_steps(ctx, keywords.get("steps_per_epoch"), root),
                         _loop_epochs(ctx, keywords.get("epochs"), stmt, root)) if f is not None]
    counted = keywords.get("total_steps") or keywords.get("steps_per_epoch")
    fill: dict[str, object] = {"line": root, "fail_line": line, "name": name,
                               "count": int(found["total"]), "numel": int(found["taken"]),
                               "expr": text(counted) if counted is not None else "total_steps"}
    return [Candidate("schedule-too-short", root, 0.85, [("schedule-length", fill)], fixes,
                      fill)]


def _ceil_steps(ctx: Ctx, given: ast.expr | None, root: int) -> Fix | None:
    if not isinstance(given, ast.BinOp) or not isinstance(given.op, ast.FloorDiv):
        return None
    new = f"math.ceil({text(given.left)} / {text(given.right)})"
    edit = replace_node(ctx.code, given, new)
    if edit is None:
        return None
    edits: tuple[Edit, ...] = (edit,)
    if "math" not in ctx.flow.imported:
        edits = (Edit("insert_before", 1, "import math"), edit)
    return Fix(edits, runs_clean, T(
        f"count the last, partial batch too: on line {root} `steps_per_epoch={new}`",
        f"把最后那个不满的批也算上：第 {root} 行写成 `steps_per_epoch={new}`"))


def _loader_steps(ctx: Ctx, given: ast.expr | None, root: int) -> Fix | None:
    """``steps_per_epoch=len(loader)`` where the program has one DataLoader, made before the
    scheduler."""
    if given is None:
        return None
    loaders = [s for s in ctx.flow.statements if isinstance(s, ast.Assign)
               and s.lineno < root and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)
               and isinstance(s.value, ast.Call) and call_name(s.value) == "DataLoader"]
    if len(loaders) != 1:
        return None
    new = f"len({text(loaders[0].targets[0])})"
    if text(given) == new:
        return None
    edit = replace_node(ctx.code, given, new)
    return Fix((edit,), runs_clean, T(
        f"count the loader's batches: on line {root} `steps_per_epoch={new}`",
        f"按数据加载器的批数计算：第 {root} 行写成 `steps_per_epoch={new}`")) \
        if edit is not None else None


def _loop_epochs(ctx: Ctx, given: ast.expr | None, stmt: ast.stmt, root: int) -> Fix | None:
    """``epochs=`` the number of passes of the outermost loop around the step, where that
    loop runs ``range(n)`` and ``epochs`` says another number."""
    loops = [s for s in ctx.flow.loops_of(stmt) if isinstance(s, ast.For)]
    if given is None or len(loops) < 2:
        return None
    outer = loops[-1]
    if not (isinstance(outer.iter, ast.Call) and call_name(outer.iter) == "range"
            and len(outer.iter.args) == 1):
        return None
    new = text(outer.iter.args[0])
    if new == text(given):
        return None
    edit = replace_node(ctx.code, given, new)
    return Fix((edit,), runs_clean, T(
        f"give the scheduler the epochs the loop on line {outer.lineno} runs: on line {root} "
        f"`epochs={new}`",
        f"把第 {outer.lineno} 行循环实际运行的轮数交给调度器：第 {root} 行写成 `epochs={new}`")) \
        if edit is not None else None


# -- float labels given to one_hot -----------------------------------------------------------
ONE_HOT = "one_hot is only applicable to index tensor"


def check_one_hot_float(ctx: Ctx) -> list[Candidate]:
    """``F.one_hot(labels)`` with ``labels`` floats: class indices are integers. The cause
    is where the labels were made of floats; the changes make them integers there, or
    convert them at the call."""
    failed = failed_op(ctx, "one_hot")
    line, stmt = ctx.failing_statement()
    if ONE_HOT not in ctx.message or failed is None or not failed.inputs or stmt is None:
        return []
    labels = failed.inputs[0]
    if "int64" in labels.dtype or not labels.name:
        return []
    root = labels.line or line
    fixes: list[Fix] = []
    if labels.line != line:
        made = _made_as(ctx, labels, "torch.long", "long", T("an integer tensor", "整数张量"))
        if made is not None:
            fixes.append(made)
    call = next((n for n in ast.walk(stmt) if isinstance(n, ast.Call)
                 and call_name(n) == "one_hot" and n.args), None)
    new = postfix(call.args[0], ".long()") if call is not None else ""
    converted = node_fix(ctx.code, call.args[0], new, runs_clean, T(
        f"on line {line} give `one_hot` integer indices: `{new}`",
        f"第 {line} 行把整数索引交给 `one_hot`：`{new}`")) if call is not None else None
    if converted is not None:
        fixes.append(converted)
    fill: dict[str, object] = {"line": root, "fail_line": line, "name": _said(labels.name),
                               "given": f"`{labels.dtype}`", "op": labels.op or ""}
    return [Candidate("one-hot-float-labels", root, 0.85, [("labels-float", fill)], fixes,
                      fill)]


EXCEPTION_CHECKS: tuple[Check, ...] = (check_registered_after_assigned, check_expand_size,
                                       check_inplace_too_small, check_inplace_into_integers,
                                       check_state_for_another_batch, check_container_called,
                                       check_schedule_too_short, check_one_hot_float)
SILENT_CHECKS: tuple[Check, ...] = ()

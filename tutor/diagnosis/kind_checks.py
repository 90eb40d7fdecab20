"""A call whose error says what kind of value it wants, given another kind: a float mask where
masks must be boolean, a float index where indices are integers, integer targets where a loss
computes in floats, a size from true division where sizes are whole numbers, a model where an
optimizer takes its parameters, a 0-dim tensor indexed where ``.item()`` gives its number.

No message of this class is catalogued one by one. The message says which kind is wanted; the
failing line's arguments, the run's values and the source say which argument is of another
kind; the argument converted to the wanted kind is tried by a re-run, and only a change that
makes the program run is given. The same value given the same way on other lines (the
optimizer made in two branches, three layer sizes divided alike) is converted there too, so
the re-run gets past them all.
"""

from __future__ import annotations

import ast
import itertools
import re
from collections import defaultdict

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import Edit, Fix, postfix, replace_node, replace_nodes
from tutor.diagnosis.flow import call_name, text
from tutor.diagnosis.verify import runs_clean
from tutor.i18n import T, Text
from tutor.sandbox.models import TensorSnapshot

WANT_VERB = (r"(?:only supports?|supports? only|expected|expects?|must be|should be|requires?"
             r"|needs?)")
DTYPE_WORDS = {
    "bool": re.compile(r"\b(?:bool|boolean|Bool)\b"),
    "long": re.compile(r"\b(?:Long|long|int64|int32/int64|Int)\b"),
    "float": re.compile(r"\b(?:Float|float32|floating point)\b"),
}
WANTED_CLAUSE = re.compile(WANT_VERB + r"(?P<clause>[^,;.]*?)(?:,|;|\bbut\b|\bgot\b|\bfound\b|$)",
                           re.IGNORECASE)
AGREEMENT = re.compile(r"scalar type|same dtype|to have the same")
"""Messages about two operands that disagree: which one to convert is the operands' check's
question (where each was made), not a kind the call wants."""
INT_WANTED = re.compile(r"tuple of ints, but found element of type float|'float' object cannot "
                        r"be interpreted as an integer|must be int, not float|expected int")
NOT_ITERABLE = re.compile(r"'(?P<given>\w+)' object is not iterable|iterable of Tensors or "
                          r"dicts, but got (?P<given2>[\w.]+)")
ZERO_DIM_INDEX = "invalid index of a 0-dim tensor"
CAST = re.compile(r"result type (?:Float|Double|Half|BFloat16|ComplexFloat) can't be cast to "
                  r"the desired output type (?:Long|Int|Short|Char|Byte|Bool)")
"""A float result written into an integer tensor: an in-place op on it, or a loss whose
target is integers. The integer tensor is the one to make float."""

CONVERT = {"bool": ".bool()", "long": ".long()", "float": ".float()"}
DTYPES = {"bool": ("torch.bool",), "long": ("torch.int64", "torch.int32"),
          "float": ("torch.float32", "torch.float64", "torch.float16", "torch.bfloat16")}
WANTED_WORDS: dict[str, Text] = {
    "bool": T("a boolean tensor (`torch.bool`)", "布尔张量（`torch.bool`）"),
    "long": T("an integer tensor (`torch.long`)", "整数张量（`torch.long`）"),
    "float": T("a floating-point tensor", "浮点张量"),
    "int": T("whole numbers (`int`)", "整数（`int`）"),
    "parameters": T("the tensors to update (`.parameters()`), not the module",
                    "要更新的张量（`.parameters()`），而不是模块本身"),
    "item": T("a Python number (`.item()`)", "Python 数值（`.item()`）"),
}
MAX_TRIES = 3
"""Conversions tried per error: each is a re-run; the message names one kind, so few
arguments of the failing line are of another."""


def wanted_kind(message: str) -> str | None:
    """The kind of value the message says the call wants, None where it says none."""
    if ZERO_DIM_INDEX in message:
        return "item"
    if CAST.search(message):
        return "float"
    if INT_WANTED.search(message):
        return "int"
    if NOT_ITERABLE.search(message):
        return "parameters"
    if AGREEMENT.search(message):
        return None
    for found in WANTED_CLAUSE.finditer(message):
        clause = found.group("clause")
        hits = [kind for kind, words in DTYPE_WORDS.items() if words.search(clause)]
        if len(hits) == 1:
            return hits[0]
    return None


def check_wanted_kind(ctx: Ctx) -> list[Candidate]:
    """The failing line's arguments of another kind than the message wants, each converted
    (where a conversion made it first), at most :data:`MAX_TRIES` of them."""
    kind = wanted_kind(ctx.message)
    if kind is None:
        return []
    line, stmt = ctx.failing_statement()
    if stmt is None:
        return []
    if kind in CONVERT:
        tries = _dtype_tries(ctx, stmt, kind)
    elif kind == "int":
        tries = _whole_number_tries(ctx, stmt)
    elif kind == "parameters":
        tries = _parameters_tries(ctx, stmt)
    else:
        tries = _item_tries(stmt)
    out = []
    if kind in CONVERT:
        out.extend(_made_of_another_kind(ctx, stmt, kind, line))
        out.extend(_kind_changed_by(ctx, kind, line))
    for shown, given, changes in tries[:MAX_TRIES]:
        edits = _edits(ctx.code, changes)
        if edits is None:
            continue
        lines = sorted({getattr(node, "lineno", line) for node, _ in changes})
        where = ", ".join(map(str, lines))
        new = changes[0][1]
        on = T(f"on line {where}" if len(lines) == 1 else f"on lines {where}", f"第 {where} 行")
        describe = T(f"{on.en} divide with `//`, which gives a whole number: `{new}`",
                     f"{on.zh}用 `//` 做除法，得到整数：`{new}`") if kind == "int" else T(
            f"{on.en} use `{new}`", f"{on.zh}改用 `{new}`")
        root = lines[0]
        fill: dict[str, object] = {"line": root, "fail_line": line, "name": shown,
                                   "given": given, "wanted": WANTED_WORDS[kind], "new": new}
        out.append(Candidate("wanted-kind", root, 0.6, [("kind-given", fill)],
                             [Fix(edits, runs_clean, describe)], fill))
    return out


Change = tuple[ast.AST, str]
Try = tuple[str, Text | str, list[Change]]
"""(the argument as written, what kind it was, the changes that convert it)"""


def _edits(code: str, changes: list[Change]) -> tuple[Edit, ...] | None:
    by_line: dict[int, list[Change]] = defaultdict(list)
    for node, new in changes:
        by_line[getattr(node, "lineno", 0)].append((node, new))
    edits = tuple(replace_nodes(code, group) for group in by_line.values())
    return None if any(e is None for e in edits) else tuple(e for e in edits if e is not None)


def _calls(stmt: ast.stmt) -> list[ast.Call]:
    return [n for n in ast.walk(stmt) if isinstance(n, ast.Call)]


def _arguments(call: ast.Call) -> list[ast.expr]:
    return [*call.args, *(k.value for k in call.keywords)]


def _given(stmt: ast.stmt, *, written: bool = True) -> list[ast.expr]:
    """What the failing statement hands to torch: the calls' arguments, and the tensors an
    in-place op writes into (``x += 0.5``, ``x.add_(...)``), unless ``written`` is False:
    such a tensor can only be given its kind where it is made (a converted copy would be
    written instead of it)."""
    into: list[ast.expr] = [stmt.target] if isinstance(stmt, ast.AugAssign) else []
    into += [c.func.value for c in _calls(stmt) if isinstance(c.func, ast.Attribute)
             and c.func.attr.endswith("_") and not c.func.attr.startswith("_")]
    return [*(a for call in _calls(stmt) for a in _arguments(call)), *(into if written else ())]


def _tensor_dtype(ctx: Ctx, node: ast.expr) -> str | None:
    """The dtype of the tensor ``node`` is, from the failing frame's values: a name, or a
    chain of methods on one that keep its dtype (``mask.unsqueeze(1)``)."""
    locals_ = dict(ctx.error.locals) if ctx.error is not None else {}
    base = node
    while isinstance(base, ast.Call) and isinstance(base.func, ast.Attribute) and \
            base.func.attr not in ("bool", "long", "float", "int", "double", "half", "to",
                                   "type", "sum", "mean", "argmax", "eq", "ne", "gt", "lt"):
        base = base.func.value
    snap = locals_.get(base.id) if isinstance(base, ast.Name) else None
    return snap.dtype if isinstance(snap, TensorSnapshot) else None


def _dtype_tries(ctx: Ctx, stmt: ast.stmt, kind: str) -> list[Try]:
    """Tensor arguments of another dtype than the wanted one, converted at the call; the
    arguments the message names (``mask``, ``index``, ``target``) first."""
    words = set(re.findall(r"[a-z]+", ctx.message.lower()))
    found: list[tuple[bool, Try]] = []
    seen: set[str] = set()
    for arg in _given(stmt, written=False):
        dtype = _tensor_dtype(ctx, arg)
        shown = text(arg)
        if dtype is None or dtype in DTYPES[kind] or shown in seen:
            continue
        seen.add(shown)
        named = bool(words & set(re.findall(r"[a-z]+", shown.lower())))
        found.append((not named, (shown, f"`{dtype}`", [(arg, postfix(arg, CONVERT[kind]))])))
    return [t for _, t in sorted(found, key=lambda f: f[0])]


CONVERSIONS = frozenset({"float", "double", "half", "long", "int", "bool", "to", "type"})


def _base_name(node: ast.expr) -> ast.Name | None:
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        node = node.func.value
    return node if isinstance(node, ast.Name) else None


def _made_of_another_kind(ctx: Ctx, stmt: ast.stmt, kind: str, line: int) -> list[Candidate]:
    """An argument made of its kind on purpose: its assignment (or the return of the
    program's function that made it) ends in a conversion (``(...).float()``). The cause is
    that line, and the change there is tried first."""
    out = []
    tensors = [a for a in _given(stmt)
               if (_tensor_dtype(ctx, a) or DTYPES[kind][0]) not in DTYPES[kind]]
    for arg in tensors:
        name = _base_name(arg)
        made = ctx.flow.assigned_before(name.id, line) if name is not None else None
        value = ctx.flow.value_of(made) if made is not None else None
        conversion = _conversion_in(ctx, value)
        if name is None or conversion is None:
            continue
        assert isinstance(conversion.func, ast.Attribute)
        receiver = conversion.func.value
        new = text(receiver) if kind == "bool" and isinstance(receiver, ast.Compare) else \
            postfix(receiver, CONVERT[kind])
        edits = _edits(ctx.code, [(conversion, new)])
        if edits is None:
            continue
        at, op = conversion.lineno, conversion.func.attr
        describe = T(f"on line {at} keep the comparison's boolean result, without `.{op}()`: "
                     f"`{new}`", f"第 {at} 行保留比较得到的布尔结果，去掉 `.{op}()`：`{new}`"
                     ) if new == text(receiver) else T(
            f"on line {at} make it {WANTED_WORDS[kind].en}: `{new}`",
            f"第 {at} 行把它做成{WANTED_WORDS[kind].zh}：`{new}`")
        fill: dict[str, object] = {
            "line": at, "fail_line": line, "name": name.id, "op": op,
            "given": f"`{_tensor_dtype(ctx, arg)}`", "wanted": WANTED_WORDS[kind], "new": new}
        out.append(Candidate("wanted-kind", at, 0.65, [("kind-given", fill), ("kind-made", fill)],
                             [Fix(edits, runs_clean, describe)], fill))
    return out


DIVISIONS = frozenset({"div", "true_divide", "divide", "__truediv__", "__rtruediv__"})
BINARY = {"__truediv__": ast.Div, "__rtruediv__": ast.Div, "div": ast.Div,
          "true_divide": ast.Div, "__mul__": ast.Mult, "__rmul__": ast.Mult, "mul": ast.Mult,
          "__add__": ast.Add, "__radd__": ast.Add, "add": ast.Add, "__sub__": ast.Sub,
          "__rsub__": ast.Sub, "sub": ast.Sub, "__pow__": ast.Pow, "pow": ast.Pow}
"""The operator a torch op's name stands for where the source writes it as one (``a / b``
is recorded as ``div``)."""


def _kind_changed_by(ctx: Ctx, kind: str, line: int) -> list[Candidate]:
    """Where a value of the wanted kind turned into another, by the run's record of the ops
    that made the failing op's operand: the newest op whose result is of another kind while
    the value it came from was of the wanted one (indices divided with ``/``, which makes
    floats of integers). That op is the cause; its own change (floor division for a
    division, else its result converted) is tried."""
    failed = ctx.evidence.failed
    if failed is None:
        return []
    out = []
    for operand in failed.inputs:
        history = operand.history
        if operand.dtype in DTYPES[kind] or len(history) < 2:
            continue
        # (an op of several outputs of several kinds, topk's values and indices, records
        # none: a division after it is still where integers would become floats)
        at = next((i for i, (link, older) in enumerate(itertools.pairwise(history))
                   if link.dtype and link.dtype not in DTYPES[kind] and (
                       older.dtype in DTYPES[kind] or (
                           older.dtype is None and link.op in DIVISIONS and kind == "long"))),
                  None)
        if at is None:
            continue
        link = history[at]
        if link.op.strip("_") in CONVERSIONS:
            continue  # made so on purpose: _made_of_another_kind's
        node = _op_node(ctx, link.line, link.op)
        if node is None or link.line == line:
            continue  # on the failing line itself: the conversion there is the use's
        changes = [c for c in (_floor_division(ctx, node, link.op, kind),
                               _converted_result(ctx, node, kind, link.line)) if c is not None]
        if not changes:
            continue
        stmt = ctx.flow.statement_at(link.line)
        targets = stmt.targets if isinstance(stmt, ast.Assign) else []
        name = text(targets[0]) if len(targets) == 1 and isinstance(
            targets[0], (ast.Name, ast.Attribute)) else text(node)
        fill: dict[str, object] = {
            "line": link.line, "fail_line": line, "name": name,
            "op": text(node) if isinstance(node, ast.BinOp) else link.op,
            "given": f"`{link.dtype}`", "wanted": WANTED_WORDS[kind], "new": changes[0][1]}
        out.append(Candidate("wanted-kind", link.line, 0.68, [
            ("kind-given", fill), ("kind-changed", fill)], [f for f, _ in changes], fill))
    return out[:1]


def _op_node(ctx: Ctx, line: int, op: str) -> ast.expr | None:
    """The expression on ``line`` that applies ``op``: a call of that name, or the binary
    operator of a ``__dunder__``; None where there is not exactly one."""
    stmt = ctx.flow.statement_at(line)
    if stmt is None:
        return None
    bare = op.strip("_")
    found: list[ast.expr] = [n for n in ast.walk(stmt) if isinstance(n, ast.Call)
                             and call_name(n) in (op, bare) and n.lineno == line]
    if op in BINARY:
        found += [n for n in ast.walk(stmt) if isinstance(n, ast.BinOp)
                  and isinstance(n.op, BINARY[op]) and n.lineno == line]
    return found[0] if len(found) == 1 else None


def _floor_division(ctx: Ctx, node: ast.expr, op: str, kind: str) -> tuple[Fix, str] | None:
    """A division of integers written to keep them integers: ``a // b``, or
    ``torch.div(a, b, rounding_mode="floor")``."""
    if op not in DIVISIONS or kind != "long":
        return None
    if isinstance(node, ast.BinOp):
        new = f"{text(node.left)} // {text(node.right)}"
    elif isinstance(node, ast.Call) and not any(k.arg == "rounding_mode" for k in node.keywords):
        args = [text(a) for a in node.args] + [f"{k.arg}={text(k.value)}" if k.arg
                                                else f"**{text(k.value)}" for k in node.keywords]
        floor = 'rounding_mode="floor"'
        new = f"{text(node.func)}({', '.join([*args, floor])})"
    else:
        return None
    edits = _edits(ctx.code, [(node, new)])
    if edits is None:
        return None
    return Fix(edits, runs_clean, T(
        f"on line {node.lineno} divide keeping whole numbers: `{new}`",
        f"第 {node.lineno} 行做保留整数的除法：`{new}`")), new


def _converted_result(ctx: Ctx, node: ast.expr, kind: str, line: int
                      ) -> tuple[Fix, str] | None:
    new = postfix(node, CONVERT[kind])
    edits = _edits(ctx.code, [(node, new)])
    if edits is None:
        return None
    return Fix(edits, runs_clean, T(f"on line {line} make it {WANTED_WORDS[kind].en}: `{new}`",
                                    f"第 {line} 行把它做成{WANTED_WORDS[kind].zh}：`{new}`")), new


def _conversion_in(ctx: Ctx, value: ast.expr | None) -> ast.Call | None:
    """The conversion ``value`` ends in, or the one every return of the program's function
    it calls ends in."""
    def conversion(node: ast.expr | None) -> ast.Call | None:
        ok = isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            node.func.attr in CONVERSIONS
        return node if ok else None  # type: ignore[return-value]

    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
        defs = [d for d in ast.walk(ctx.flow.tree) if isinstance(d, ast.FunctionDef)
                and d.name == value.func.id]
        returns = [r.value for d in defs[:1] for r in ast.walk(d) if isinstance(r, ast.Return)]
        found = [conversion(r) for r in returns]
        return found[0] if len(found) == 1 else None
    return conversion(value)


def _whole_number_tries(ctx: Ctx, stmt: ast.stmt) -> list[Try]:
    """True divisions in the failing call's arguments, made floor divisions there and in the
    other calls of the same function: first only in the arguments at the same places (a fill
    value divided on purpose stays as it is), then in all their arguments (the sizes of
    layers divided alike, one layer's output size the next one's input size)."""
    funcs = {text(call.func) for call in _calls(stmt)}
    places = {(text(call.func), where) for call in _calls(stmt)
              for where, arg in _placed_arguments(call) if _divisions(arg)}
    if not places:
        return []
    calls = [c for c in ast.walk(ctx.flow.tree) if isinstance(c, ast.Call)
             and text(c.func) in funcs]
    same_place = [d for call in calls for where, arg in _placed_arguments(call)
                  if (text(call.func), where) in places for d in _divisions(arg)]
    anywhere = [d for call in calls for _, arg in _placed_arguments(call)
                for d in _divisions(arg)]
    failing = [d for call in _calls(stmt) for _, arg in _placed_arguments(call)
               for d in _divisions(arg)]
    given = T("a float (`/` always gives one)", "浮点数（`/` 总是得到浮点数）")
    tries: list[Try] = []
    for divided in (same_place, anywhere):
        changes: list[Change] = [(d, _floor(d)) for d in dict.fromkeys([*failing, *divided])]
        if all(changes != t[2] for t in tries):
            tries.append((text(failing[0]), given, changes))
    return tries


def _placed_arguments(call: ast.Call) -> list[tuple[int | str, ast.expr]]:
    """A call's arguments with their places: the position, or the keyword's name."""
    return [*enumerate(call.args), *((k.arg or "**", k.value) for k in call.keywords)]


def _divisions(node: ast.expr) -> list[ast.BinOp]:
    return [n for n in ast.walk(node) if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Div)]


def _floor(node: ast.BinOp) -> str:
    return f"{_operand(node.left)} // {_operand(node.right)}"


def _operand(node: ast.expr) -> str:
    shown = text(node)
    return shown if isinstance(node, (ast.Name, ast.Attribute, ast.Call, ast.Subscript,
                                      ast.Constant)) else f"({shown})"


def _parameters_tries(ctx: Ctx, stmt: ast.stmt) -> list[Try]:
    """A name given as the first argument of the failing call (an optimizer made from the
    model itself): its ``.parameters()``, there and wherever the same scope gives that name
    first to a call of the same module (``torch.optim.Adam`` and ``torch.optim.SGD``)."""
    found = NOT_ITERABLE.search(ctx.message)
    assert found is not None
    given = found.group("given") or found.group("given2") or ""
    out: list[Try] = []
    for call in _calls(stmt):
        first = call.args[0] if call.args else None
        if not isinstance(first, ast.Name) or not isinstance(call.func, ast.Attribute):
            continue
        prefix = text(call.func.value)
        scope = ctx.flow.scope_of(stmt)
        alike = [c for c in ast.walk(scope) if isinstance(c, ast.Call) and c.args
                 and isinstance(c.args[0], ast.Name) and c.args[0].id == first.id
                 and isinstance(c.func, ast.Attribute) and text(c.func.value) == prefix]
        changes: list[Change] = [(c.args[0], f"{first.id}.parameters()") for c in alike]
        out.append((first.id, T(f"the module `{given}`", f"模块 `{given}`"), changes))
    return out


def _item_tries(stmt: ast.stmt) -> list[Try]:
    """``loss.data[0]`` / ``loss[0]`` from code written for old torch, where a loss was a
    one-element vector: a 0-dim tensor's number is ``.item()``."""
    out: list[Try] = []
    for node in ast.walk(stmt):
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and \
                node.slice.value == 0:
            base = node.value
            if isinstance(base, ast.Attribute) and base.attr == "data":
                base = base.value
            out.append((text(node.value), T("a 0-dim tensor, which has no element 0",
                                            "0 维张量，没有第 0 个元素"),
                        [(node, postfix(base, ".item()"))]))
    return out


NOT_A_PARAMETER = re.compile(r"cannot assign '[\w.]+'(?: object)? (?:as|to) parameter "
                             r"'(?P<name>\w+)' \(torch\.nn\.Parameter or None")


def check_parameter_assigned(ctx: Ctx) -> list[Candidate]:
    """A plain tensor put where a module holds a parameter. Made in ``__init__`` (or given to
    ``register_parameter``), it is meant to be learned: wrap it in ``nn.Parameter``. Computed
    from the parameter in another method (``self.w = softmax(self.w)``), it replaces the one
    the optimizer holds: the computed value belongs in a local name, and the parameter stays."""
    found = NOT_A_PARAMETER.search(ctx.message)
    line, stmt = ctx.failing_statement()
    if found is None or stmt is None:
        return []
    name = found.group("name")
    method = ctx.flow.enclosing_function(stmt)
    value: ast.expr | None = None
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(
            stmt.targets[0], ast.Attribute) and stmt.targets[0].attr == name:
        value = stmt.value
    elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and \
            call_name(stmt.value) == "register_parameter" and len(stmt.value.args) == 2:
        value = stmt.value.args[1]
    elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and \
            call_name(stmt.value) == "setattr" and len(stmt.value.args) == 3:
        return _set_by_setattr(stmt.value, line, name)
    if value is None:
        return []
    reads_itself = any(isinstance(n, ast.Attribute) and n.attr == name for n in ast.walk(value))
    fill: dict[str, object] = {"line": line, "name": name}
    if method is not None and method.name != "__init__" and reads_itself and \
            isinstance(stmt, ast.Assign):
        made = _state_parameter(ctx, name)
        # a parameter that never learns, made anew from itself at each call, is the
        # module's state (a cache, a running value): a local would drop what it carries
        fix = _as_buffer(ctx, made, name) if made is not None else _kept_local(
            ctx, stmt, method, name)
        step = "parameter-state" if made is not None else "parameter-replaced"
        if made is not None:
            fill["first_use"] = made[0].lineno
    else:
        nn = "nn" if "nn" in ctx.flow.names_in(ctx.flow.tree) else "torch.nn"
        wrapped = f"{nn}.Parameter({text(value)})"
        edits = _edits(ctx.code, [(value, wrapped)])
        fix = Fix(edits, runs_clean, T(f"on line {line} make it a parameter: `{wrapped}`",
                                       f"第 {line} 行把它做成参数：`{wrapped}`")) if edits else None
        step = "parameter-plain"
    if fix is None:
        return []
    return [Candidate("parameter-assigned", line, 0.85, [(step, fill)], [fix], fill)]


def _set_by_setattr(call: ast.Call, line: int, name: str) -> list[Candidate]:
    """``setattr(model, name, p - lr * g)``: a computed tensor put, by name, where the
    module registered a parameter (a functional update of meta-learning, a weight-drop
    wrapper's dropped weight). A registered parameter is replaced only by a parameter; the
    registration removed first (``delattr``), the name takes a plain tensor, and that is
    tried. The other way, ``torch.func.functional_call``, is said where to look."""
    owner, attr, value = call.args
    delete = f"delattr({text(owner)}, {text(attr)})"
    fill: dict[str, object] = {"line": line, "name": name, "target": text(owner),
                               "expr": text(value), "new": delete}
    fix = Fix((Edit("insert_before", line, delete),), runs_clean, T(
        f"before line {line} remove the registered parameter, so its name can hold the "
        f"computed tensor: `{delete}`",
        f"在第 {line} 行之前删除已注册的参数，让这个名字能存放计算出的张量：`{delete}`"))
    direction = T(
        f"To run `{text(owner)}` with computed weights (a functional update), call it with "
        f"them instead of assigning them: `torch.func.functional_call({text(owner)}, "
        f"new_params, (x,))`; to keep assigning, first remove the registered parameter "
        f"(`{delete}`), and register the weight you learn under another name.",
        f"要用计算出的权重运行 `{text(owner)}`（函数式更新），把它们作为参数传入调用，而不是"
        f"赋值：`torch.func.functional_call({text(owner)}, new_params, (x,))`；若要继续赋值，"
        f"先删除已注册的参数（`{delete}`），并把要学习的权重注册为另一个名字。")
    return [Candidate("parameter-assigned", line, 0.85, [("parameter-setattr", fill)], [fix],
                      fill, direction=direction)]


def _state_parameter(ctx: Ctx, name: str) -> tuple[ast.Assign, ast.expr] | None:
    """``self.name = nn.Parameter(value, requires_grad=False)``: the statement and the value
    of a parameter made not to learn."""
    for stmt in ctx.flow.assignments.get(f"self.{name}", []):
        value = ctx.flow.value_of(stmt)
        if isinstance(stmt, ast.Assign) and isinstance(value, ast.Call) and \
                call_name(value) == "Parameter" and value.args and any(
                k.arg == "requires_grad" and isinstance(k.value, ast.Constant)
                and k.value.value is False for k in value.keywords):
            return stmt, value.args[0]
    return None


def _as_buffer(ctx: Ctx, made: tuple[ast.Assign, ast.expr], name: str) -> Fix | None:
    """The state registered as a buffer where it is made: it moves with the module and is
    saved with it, and a tensor computed from it may take its place."""
    stmt, value = made
    new = f'self.register_buffer("{name}", {text(value)})'
    edit = replace_node(ctx.code, stmt, new)
    if edit is None:
        return None
    return Fix((edit,), runs_clean, T(
        f"make `{name}` a buffer, not a parameter, where it is made: `{new}` on line "
        f"{stmt.lineno}; it is state that no optimizer learns, and a buffer may be given the "
        "value computed from it",
        f"在创建处把 `{name}` 注册为 buffer 而不是参数：第 {stmt.lineno} 行写成 `{new}`；"
        "它是不由优化器学习的状态，buffer 可以被赋予由它计算出的新值"))


def _kept_local(ctx: Ctx, stmt: ast.Assign, method: ast.AST, name: str) -> Fix | None:
    """``self.name = ...`` in ``method`` made a local ``name`` (another when taken), and the
    reads of ``self.name`` after it in the method read the local."""
    local = next(n for n in (name, f"{name}_now", f"{name}_value")
                 if n not in ctx.flow.names_in(method))
    target = stmt.targets[0]
    reads = [n for n in ast.walk(method) if isinstance(n, ast.Attribute) and n.attr == name
             and isinstance(n.value, ast.Name) and n.value.id == "self"
             and isinstance(n.ctx, ast.Load) and n.lineno > (stmt.end_lineno or stmt.lineno)]
    edits = _edits(ctx.code, [(target, local), *((r, local) for r in reads)])
    if edits is None:
        return None
    return Fix(edits, runs_clean, T(
        f"on line {stmt.lineno} keep the computed value in a local name, `{local} = ...`, and "
        f"read `{local}` after it: `self.{name}` stays the parameter the optimizer updates",
        f"第 {stmt.lineno} 行把计算结果存到局部变量 `{local} = ...`，之后读取 `{local}`："
        f"`self.{name}` 仍是优化器更新的那个参数"))


NOT_A_MODULE = re.compile(r"^(?P<kind>\w+) is not a Module subclass")
SEQUENCES = frozenset({"list", "tuple"})


def check_layers_given_as_list(ctx: Ctx) -> list[Candidate]:
    """``nn.Sequential(layers)`` with ``layers`` a list: Sequential takes its modules one
    by one (``*layers``); a list is not a module. The run names the list's kind; the call
    on the failing line given one argument of that kind gets it unpacked, and that is tried."""
    found = NOT_A_MODULE.search(ctx.message)
    if found is None or found["kind"] not in SEQUENCES:
        return []
    line, stmt = ctx.failing_statement()
    if stmt is None:
        return []
    kinds = dict(ctx.error.kinds) if ctx.error is not None else {}
    if ctx.error is not None:  # a list or tuple named on the line is kept as a snapshot
        kinds.update({name: snap.type for name, snap in ctx.error.locals.items()
                      if snap.kind == "value"})
    out = []
    for call in _calls(stmt):
        if len(call.args) != 1 or call.keywords or isinstance(call.args[0], ast.Starred):
            continue
        arg = call.args[0]
        literal = isinstance(arg, ast.List | ast.Tuple | ast.ListComp)
        if not literal and not (isinstance(arg, ast.Name) and kinds.get(arg.id) in SEQUENCES):
            continue
        new = f"*{text(arg)}"
        edits = _edits(ctx.code, [(arg, new)])
        if edits is None:
            continue
        fill: dict[str, object] = {"line": line, "name": text(arg), "given": found["kind"],
                                   "op": text(call.func), "new": f"{text(call.func)}({new})"}
        out.append(Candidate("modules-given-as-list", line, 0.85, [("list-not-module", fill)],
                             [Fix(edits, runs_clean, T(
                                 f"unpack the list into the call on line {line}: "
                                 f"`{text(call.func)}({new})`",
                                 f"第 {line} 行把列表拆开传入：`{text(call.func)}({new})`"))],
                             fill))
    return out


BOOL_ARITHMETIC = re.compile(r"(?:Subtraction|Negation), the `-` operator, (?:with|on) a "
                             r"bool tensor is not supported")


def check_bool_arithmetic(ctx: Ctx) -> list[Candidate]:
    """``1 - mask`` or ``-mask`` with ``mask`` a bool tensor: torch refuses arithmetic on
    booleans (its message suggests ``~``, which inverts a mask but gives booleans again,
    where the code goes on to compute with numbers). The operand made a number, ``.float()``,
    is tried for each operand of the failing line's subtraction or negation."""
    if BOOL_ARITHMETIC.search(ctx.message) is None:
        return []
    line, stmt = ctx.failing_statement()
    if stmt is None:
        return []
    operands: list[ast.expr] = []
    for node in ast.walk(stmt):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub):
            operands += [node.left, node.right]
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            operands.append(node.operand)
        elif isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Sub):
            operands += [node.target, node.value]
    seen: set[str] = set()
    out = []
    for operand in operands:
        shown = text(operand)
        if isinstance(operand, ast.Constant | ast.BinOp) or shown in seen or \
                not _bool_operand(ctx, operand):
            continue
        seen.add(shown)
        new = postfix(operand, ".float()")
        edits = _edits(ctx.code, [(operand, new)])
        if edits is None:
            continue
        fill: dict[str, object] = {"line": line, "fail_line": line, "name": shown,
                                   "given": T("a bool tensor", "布尔张量"),
                                   "wanted": T("numbers", "数值"), "new": new}
        out.append(Candidate("wanted-kind", line, 0.7, [("kind-given", fill)], [Fix(
            edits, runs_clean, T(f"compute with numbers on line {line}: `{new}` (`~` would "
                                 "invert the mask but keep it boolean)",
                                 f"第 {line} 行用数值计算：`{new}`（`~` 虽能取反掩码，"
                                 "结果仍是布尔值）"))], fill))
        if len(out) >= MAX_TRIES:
            break
    return out


def _bool_operand(ctx: Ctx, operand: ast.expr) -> bool:
    """The run shows ``operand`` is a bool tensor: the failed op's operand of its name, or
    made by its call, was one; or it names a bool tensor of the failing frame."""
    ev = ctx.evidence
    failed = ev.failed.inputs if ev is not None and ev.failed is not None else []
    bools = [i for i in failed if "bool" in i.dtype]
    if isinstance(operand, ast.Name):
        snap = ctx.error.locals.get(operand.id) if ctx.error is not None else None
        return any(i.name == operand.id for i in bools) or (
            isinstance(snap, TensorSnapshot) and snap.dtype == "torch.bool")
    return isinstance(operand, ast.Call) and any(
        i.op == call_name(operand) and i.line == operand.lineno for i in bools)


EXCEPTION_CHECKS: tuple[Check, ...] = (check_wanted_kind, check_parameter_assigned,
                                       check_layers_given_as_list, check_bool_arithmetic)
SILENT_CHECKS: tuple[Check, ...] = ()

"""Where a tensor's graph is cut, and the changes that keep it: ``.data``/``.detach()``
dropped, a ``no_grad`` block left, a round trip through Python or NumPy removed, an op
without gradient replaced by a differentiable stand-in (the catalog's ``surrogates``).

A round trip has two shapes. When the values only pass through Python unchanged (``.item()``
into a list, rebuilt with ``torch.tensor(list)``) the rebuild is the mistake: keep the
tensors and ``torch.stack`` them. When the math itself is done in NumPy on ``.numpy()``
copies, the line that left torch is: do the same math with torch.
"""

from __future__ import annotations

import ast
import copy
from dataclasses import replace

from tutor.diagnosis.candidate import Ctx
from tutor.diagnosis.catalog import load_catalog
from tutor.diagnosis.fixes import (
    Edit,
    Expect,
    Fix,
    indent_of,
    node_fix,
    replace_in_line,
    replace_node,
    replace_nodes,
)
from tutor.diagnosis.flow import Flow, call_name, receiver, text
from tutor.diagnosis.verify import same_loss
from tutor.i18n import T, Text

MAKERS = frozenset({"tensor", "as_tensor", "from_numpy", "Tensor", "FloatTensor",
                    "DoubleTensor"})
LEAVE_CALLS = frozenset({"item", "tolist", "numpy", "detach", "cpu"})
"""Calls that take a value out of the graph (to Python, NumPy, or a detached tensor)."""
FILLERS = frozenset({"append", "extend", "insert"})
# NumPy functions with a torch function of the same meaning.
NUMPY_TO_TORCH = {name: name for name in (
    "abs", "exp", "log", "sqrt", "sum", "mean", "max", "min", "maximum", "minimum", "tanh",
    "sin", "cos", "square", "where", "matmul", "dot", "sign", "log1p", "expm1", "stack",
    "cat", "std", "var", "prod", "exp2", "log2", "log10")} | {
    "clip": "clamp", "power": "pow", "absolute": "abs", "concatenate": "cat"}
COMPARE_OPS = {ast.Gt: "gt", ast.GtE: "ge", ast.Lt: "lt", ast.LtE: "le"}


def strip_leaving(node: ast.expr) -> ast.expr:
    """``x`` for ``x.detach().cpu().numpy()``, ``x.item()``, ``x.data``."""
    while True:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr in LEAVE_CALLS and not node.args:
            node = node.func.value
        elif isinstance(node, ast.Attribute) and node.attr == "data":
            node = node.value
        else:
            return node


def _leaving_calls(stmt: ast.AST) -> list[ast.expr]:
    """The outermost ``x.item()``/``x.numpy()``/... chains in a statement."""
    found: list[ast.expr] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.expr) and strip_leaving(node) is not node and (
                isinstance(node, ast.Call) and call_name(node) in ("item", "tolist", "numpy")):
            found.append(node)
            return
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(stmt)
    return found


def kept_tensor(ctx: Ctx, line: int, expect: Expect) -> list[Fix]:
    """``x = x.detach().item()`` (a loss term turned into a number before it is added to the
    loss): keep the tensor. The statement goes, and a later ``log.append(x)`` logs
    ``x.item()`` instead."""
    flow, code = ctx.flow, ctx.code
    stmt = flow.statement_at(line)
    if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1 or not isinstance(
            stmt.targets[0], ast.Name) or stmt.lineno != stmt.end_lineno:
        return []
    name = stmt.targets[0].id
    kept = strip_leaving(stmt.value)
    if kept is stmt.value or not (isinstance(stmt.value, ast.Call) and call_name(
            stmt.value) in ("item", "tolist", "numpy")) or text(kept) != name:
        return []
    edits = [Edit("delete", stmt.lineno)]
    scope = flow.scope_of(stmt)
    for call in flow.calls_named(*FILLERS):
        if call.lineno > stmt.lineno and flow.scope_of(call) is scope and call.args and \
                isinstance(call.args[-1], ast.Name) and call.args[-1].id == name:
            edit = replace_node(code, call.args[-1], f"{name}.item()")
            if edit is not None:
                edits.append(edit)
    return [Fix(tuple(edits), expect, T(
        f"keep `{name}` a tensor: remove line {line}, which turns it into a Python number "
        "before it joins the loss (log `.item()` of it instead)",
        f"让 `{name}` 保持张量：删除第 {line} 行（它在加入损失之前把它变成了 Python 数字），"
        "记录日志时再用 `.item()`"))]


def _maker(stmt: ast.AST | None) -> ast.Call | None:
    if stmt is None:
        return None
    return next((n for n in ast.walk(stmt) if isinstance(n, ast.Call) and call_name(n) in MAKERS
                 and n.args), None)


def round_trip(ctx: Ctx, cut_line: int, maker_line: int | None, expect: Expect
               ) -> tuple[int, list[Fix]] | None:
    """The root line and the fixes of a value taken out of the graph and rebuilt as a new
    tensor: on one line (``torch.tensor(x.item())``), through a list, or through NumPy."""
    flow, code = ctx.flow, ctx.code
    for line in dict.fromkeys([maker_line or cut_line, cut_line]):
        maker = _maker(flow.statement_at(line))
        # the value leaves the graph and comes back on this very line
        base = to_torch(maker.args[0]) if maker is not None and (
            _leaving_calls(maker.args[0]) or strip_leaving(maker.args[0]) is not maker.args[0]
        ) else None
        if maker is not None and base is not None and base != text(maker.args[0]):
            edit = replace_node(code, maker, base)
            if edit is not None:
                return line, [Fix((edit,), expect, T(
                    f"use `{base}` itself on line {line}: rebuilding it as a new tensor drops "
                    "its history", f"第 {line} 行直接使用 `{base}`：重新构造新张量会丢掉它的历史"))]
    if maker_line is None or maker_line == cut_line:
        return None
    maker = _maker(flow.statement_at(maker_line))
    stmt = flow.statement_at(cut_line)
    if maker is None or stmt is None:
        return None
    leaving = _leaving_calls(stmt)
    if not leaving:
        return None
    parents = flow.parents
    carried = all(isinstance(parents.get(n), ast.Call) and call_name(parents[n]) in FILLERS
                  for n in leaving)
    if carried and isinstance(maker.args[0], ast.Name):
        listed = maker.args[0].id
        edits = (replace_nodes(code, [(n, text(strip_leaving(n))) for n in leaving]),
                 replace_node(code, maker, f"torch.stack({listed})"))
        if None in edits:
            return None
        return maker_line, [Fix(tuple(e for e in edits if e), expect, T(
            f"keep the tensors in `{listed}` (no `.item()` on line {cut_line}) and "
            f"`torch.stack({listed})` them on line {maker_line}: `torch.tensor` of a list "
            "makes a new tensor without history",
            f"让 `{listed}` 里保留张量（第 {cut_line} 行不用 `.item()`），并在第 {maker_line} "
            f"行用 `torch.stack({listed})`：对列表调用 `torch.tensor` 会得到没有历史的新张量"))]
    return _numpy_math(ctx, stmt, leaving, maker, maker_line, expect)


def _numpy_math(ctx: Ctx, stmt: ast.stmt, leaving: list[ast.expr], maker: ast.Call,
                maker_line: int, expect: Expect) -> tuple[int, list[Fix]] | None:
    """The math done in NumPy on ``.numpy()`` copies, done with torch instead."""
    value = stmt.value if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.Return,
                                            ast.AugAssign)) else None
    if value is None:
        return None
    math, rebuilt = to_torch(value), to_torch(maker.args[0])
    if math is None or rebuilt is None:
        return None
    line = stmt.lineno
    edits = (replace_node(ctx.code, value, math), replace_node(ctx.code, maker, rebuilt))
    if None in edits:
        return None
    return line, [Fix(tuple(e for e in edits if e), expect, T(
        f"do the math of line {line} with torch on the tensors themselves, and use the result "
        f"on line {maker_line} as it is: NumPy copies have no graph",
        f"第 {line} 行直接用 torch 在张量上计算，第 {maker_line} 行直接使用结果："
        "NumPy 副本没有计算图"))]


class _ToTorch(ast.NodeTransformer):
    """NumPy calls made torch calls, copies out of the graph made the tensors themselves."""

    def __init__(self) -> None:
        self.unknown = False

    def visit_Call(self, node: ast.Call) -> ast.AST:
        base = strip_leaving(node)
        if base is not node:
            return self.visit(base)
        self.generic_visit(node)
        func = node.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and \
                func.value.id in ("np", "numpy"):
            name = NUMPY_TO_TORCH.get(func.attr)
            if name is None:
                self.unknown = True
                return node
            node.func = ast.Attribute(value=ast.Name("torch", ast.Load()), attr=name,
                                      ctx=ast.Load())
            # torch's functions take tensors where NumPy's take plain numbers too
            node.args = [ast.Call(ast.Attribute(ast.Name("torch", ast.Load()), "tensor",
                                                ast.Load()), [a], [])
                         if isinstance(a, ast.Constant) and isinstance(a.value, float | int)
                         else a for a in node.args]
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        if node.attr == "data":
            return self.visit(node.value)
        self.generic_visit(node)
        return node


def to_torch(node: ast.expr) -> str | None:
    """The expression's source with its NumPy math done by torch, or None when torch has no
    same-named function for some of it."""
    converter = _ToTorch()
    converted = converter.visit(copy.deepcopy(node))
    return None if converter.unknown else ast.unparse(converted)


def surrogate(ctx: Ctx, line: int, op: str, expect: Expect) -> list[Fix]:
    """A differentiable stand-in for ``op`` (argmax, a comparison, round) on the line. One
    that is not a soft version of the op's own values must keep the loss the program
    computed (:func:`tutor.diagnosis.verify.same_loss`): the largest value is not its
    position."""
    name = op.strip("_")
    found = load_catalog().surrogates.get(name)
    stmt = ctx.flow.statement_at(line)
    if found is None or stmt is None:
        return []
    fixes = []
    for node in ast.walk(stmt):
        fields = _surrogate_fields(node, name)
        if fields is None:
            continue
        new = found.form.format_map(fields).replace(" - 0)", ")")
        fix = node_fix(ctx.code, node, new, expect, T(f"on line {line} use `{new}`: {found.why.en}",
                                                      f"第 {line} 行改用 `{new}`：{found.why.zh}"))
        if fix is not None:
            fixes.append(fix if found.relaxes else replace(fix, keeps=same_loss))
    return fixes


def surrogate_direction(op: str) -> Text | None:
    """What to do instead of ``op``, in words, where no stand-in keeps what it computes."""
    found = load_catalog().surrogates.get(op.strip("_"))
    return Text(en=found.direction.en, zh=found.direction.zh) if found is not None and (
        found.direction is not None) else None


def keeping_values(fixes: list[Fix]) -> list[Fix]:
    """The fixes, each required to compute what the program computed: a change that
    restores the graph lets the gradient through and changes no value."""
    return [f if f.keeps is not None else replace(f, keeps=same_loss) for f in fixes]


def _surrogate_fields(node: ast.AST, name: str) -> dict[str, str] | None:
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and \
            COMPARE_OPS.get(type(node.ops[0])) == name:
        return {"x": text(node.left), "other": text(node.comparators[0]), "rest": ""}
    if not (isinstance(node, ast.Call) and call_name(node) == name):
        return None
    rest = [text(a) for a in node.args] + [text(k) for k in node.keywords]
    owner = receiver(node)
    if owner in ("torch", "th") and node.args:  # torch.argmax(x, dim=1)
        return {"x": text(node.args[0]), "rest": ", ".join(rest[1:]), "other": ""}
    if owner is not None and owner not in ("torch", "th", "np", "numpy"):
        return {"x": owner, "rest": ", ".join(rest), "other": ""}
    return None


def _create_graph(ctx: Ctx, line: int, expect: Expect) -> list[Fix]:
    stmt = ctx.flow.statement_at(line)
    for call in (n for n in ast.walk(stmt) if isinstance(n, ast.Call)) if stmt else ():
        if call_name(call) == "grad" and not any(k.arg == "create_graph" for k in call.keywords):
            wanted = ast.Call(call.func, call.args, [
                *call.keywords, ast.keyword("create_graph", ast.Constant(True))])
            edit = replace_node(ctx.code, call, ast.unparse(wanted))
            if edit is not None:
                return [Fix((edit,), expect, T(
                    f"pass `create_graph=True` to `autograd.grad` on line {line}, so the "
                    "gradient has a graph to differentiate",
                    f"第 {line} 行给 `autograd.grad` 传入 `create_graph=True`，"
                    "让梯度本身带计算图"))]
    return []


def no_grad_decorator(flow: Flow, line: int) -> int | None:
    """The line of a ``@torch.no_grad()`` on the function that holds ``line`` (or on it)."""
    for node in flow.statements:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for deco in node.decorator_list:
                if "no_grad" in text(deco) and (
                        deco.lineno == line or node.lineno <= line <= (node.end_lineno or 0)):
                    return deco.lineno
    return None


SWITCHES = ("set_grad_enabled", "_set_grad_enabled")


def grad_switched_off(flow: Flow, before: int) -> ast.Expr | None:
    """A statement before line ``before`` that turns gradients off for the rest of the run:
    ``torch.set_grad_enabled(False)`` called on its own, not as a ``with`` block (it does not
    end with the function that calls it), when no statement turns them on again."""
    found: ast.Expr | None = None
    for stmt in flow.statements:
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        if not isinstance(call, ast.Call) or call_name(call) not in SWITCHES or not call.args \
                or not isinstance(call.args[0], ast.Constant):
            continue
        if call.args[0].value is False and stmt.lineno != before and found is None:
            assert isinstance(stmt, ast.Expr)
            found = stmt
        elif call.args[0].value is True:
            return None  # switched back on somewhere: which runs last the trace would say
    return found


def scoped_no_grad(ctx: Ctx, switch: ast.Expr, expect: Expect) -> list[Fix]:
    """The statements after ``switch`` in its block put under ``with torch.no_grad():`` in
    its place: gradients off for those lines only."""
    parent = ctx.flow.parents.get(switch)
    body = next((b for b in (getattr(parent, "body", None), getattr(parent, "orelse", None))
                 if isinstance(b, list) and switch in b), None) if parent is not None else None
    if body is None:
        body = list(ctx.flow.tree.body)
    rest = body[body.index(switch) + 1:] if switch in body else []
    if not rest:
        return []
    lines = ctx.code.splitlines()
    indent = indent_of(lines[switch.lineno - 1])
    edits = [Edit("replace", switch.lineno, f"{indent}with torch.no_grad():")]
    for number in range(rest[0].lineno, (rest[-1].end_lineno or rest[-1].lineno) + 1):
        if lines[number - 1].strip():
            edits.append(Edit("replace", number, "    " + lines[number - 1]))
    end = rest[-1].end_lineno or rest[-1].lineno
    return [Fix(tuple(edits), expect, T(
        f"put lines {rest[0].lineno}-{end} under `with torch.no_grad():` instead of the "
        f"statement on line {switch.lineno}: gradients off for those lines only",
        f"把第 {rest[0].lineno}-{end} 行放进 `with torch.no_grad():`，代替第 {switch.lineno} "
        "行的语句：只在这些行关闭梯度"))]


def cut_fixes(ctx: Ctx, line: int, reason: str, op: str, expect: Expect) -> list[Fix]:
    """The changes that keep the graph through the cut on ``line`` (``reason``: data,
    no_grad, nondifferentiable, python)."""
    code, flow = ctx.code, ctx.flow
    fixes: list[Fix] = []

    def add(edit: Edit | None, describe: Text) -> None:
        if edit is not None:
            fixes.append(Fix((edit,), expect, describe))

    if reason == "data":
        add(replace_in_line(code, line, r"\.data\b", ""), T(
            f"use the tensor itself, not `.data`, on line {line}",
            f"在第 {line} 行使用张量本身，而不是 `.data`"))
    if op == "detach" or reason == "nondifferentiable":
        fixes.extend(kept_tensor(ctx, line, expect))
        add(replace_in_line(code, line, r"\.detach\(\)", ""), T(
            f"remove `.detach()` on line {line}", f"删除第 {line} 行的 `.detach()`"))
    soft: set[int] = set()
    if reason == "nondifferentiable":
        stand_ins = surrogate(ctx, line, op, expect)
        soft = {id(f) for f in stand_ins if f.keeps is None}
        fixes.extend(stand_ins)
        if op == "grad":  # a gradient differentiated again needs a graph of its own
            fixes.extend(_create_graph(ctx, line, expect))
        if op in MAKERS:  # torch.tensor([t1, t2]): a new tensor with no history
            maker = _maker(flow.statement_at(line))
            given = maker.args[0] if maker is not None and maker.args else None
            if maker is not None and given is not None and not isinstance(
                    given, (ast.List, ast.Tuple, ast.ListComp)):
                # torch.tensor(t) of a tensor: the tensor itself keeps its history (a name
                # that holds a list of tensors fails this one, and stacking is tried next)
                add(replace_node(code, maker, text(given)), T(
                    f"use `{text(given)}` itself on line {line}: `torch.tensor` copies its "
                    "values into a new tensor without history",
                    f"第 {line} 行直接使用 `{text(given)}`：`torch.tensor` 会把数值复制成"
                    "没有历史的新张量"))
            if maker is not None:
                add(replace_node(code, maker, f"torch.stack({text(maker.args[0])})"), T(
                    f"stack the tensors on line {line} (`torch.stack`): `torch.tensor` copies "
                    "their values into a new tensor without history",
                    f"第 {line} 行用 `torch.stack` 堆叠这些张量："
                    "`torch.tensor` 会把数值复制成没有历史的新张量"))
    if reason == "python":
        trip = round_trip(ctx, line, None, expect)
        fixes.extend(trip[1] if trip else [])
        add(replace_in_line(code, line, r"\.item\(\)", ""), T(
            f"keep the tensor on line {line} (no `.item()`)",
            f"在第 {line} 行保留张量（不用 `.item()`）"))
    if reason == "no_grad":
        stmt = flow.statement_at(line)
        block = stmt if isinstance(stmt, ast.With) else (
            flow.in_no_grad(stmt) if stmt is not None else None)
        if block is not None:
            fixes.append(Fix((Edit("dedent_block", block.lineno),), expect, T(
                f"compute it outside the `torch.no_grad()` block of line {block.lineno}",
                f"在第 {block.lineno} 行的 `torch.no_grad()` 块之外计算它")))
        deco = no_grad_decorator(flow, line)
        if deco is not None:
            fixes.append(Fix((Edit("delete", deco),), expect, T(
                f"remove the `@torch.no_grad()` decorator on line {deco}",
                f"删除第 {deco} 行的 `@torch.no_grad()` 装饰器")))
    # a soft version of the op's values differs from them by design; every other change
    # must compute what the program computed
    return [f if id(f) in soft else replace(f, keeps=same_loss) for f in fixes]

"""Matches a run's error and warnings against the catalog and fills in the learner's names.

Matching is deliberately strict: the exception type and a message regex must fit, and every
condition an entry states must hold. When nothing fits, the answer is an honest generic
diagnosis that points at the line: a wrong specific diagnosis is worse than a generic one.
"""

from __future__ import annotations

import ast
import difflib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal

from tutor import syntax_tree
from tutor.diagnosis.catalog import (
    FACT_PLACEHOLDERS,
    TEXT_FIELDS,
    Conditions,
    Entry,
    load_catalog,
)
from tutor.diagnosis.filling import Values, first_fitting
from tutor.diagnosis.messages import for_learner
from tutor.diagnosis.models import Diagnosis
from tutor.diagnosis.source import (
    INPLACE_UPDATE_METHODS,
    CallSite,
    Source,
    call_name,
    calls_in,
    code_text,
    makes_requires_grad,
    source_text,
)
from tutor.i18n import T, Text
from tutor.sandbox.models import ErrorInfo, RunResult, Snapshot, TensorSnapshot, WarningInfo

INTEGER_DTYPES = ("int", "uint", "long", "short")
WORDS: dict[str, Text] = {
    "var": T("the tensor", "该张量"),
    "var2": T("the other operand", "另一个操作数"),
    "var_base": T("the tensor", "该张量"),
    "callee": T("the layer", "该层"),
}
"""What prose says for a subject the run did not name. Code and facts have no such words: an
entry whose text needs an unknown one uses a variant written without it."""


def dtype_kind(dtype: str) -> str:
    name = dtype.removeprefix("torch.")
    if name == "bool":
        return "bool"
    if name.startswith("complex"):
        return "complex"
    if name.startswith(INTEGER_DTYPES):
        return "integer"
    return "floating"


def shape_text(shape: list[int]) -> str:
    return str(tuple(shape))


def shape_from_torch(text: str) -> str:
    """A shape as torch writes it in a message ('3, 4', '[3]', 'torch.Size([3, 4])',
    '2 x 2', '16x1x1') in the one spelling every diagnosis uses: (3, 4), (3,)."""
    return shape_text([int(n) for n in re.findall(r"-?\d+", text)])


# Calls that give the same values in another shape: the tensor a loss really got is still
# described by the variable before them (``target.view(4, 1)`` -> ``target``'s dtype and values).
RESHAPES = frozenset({
    "view", "reshape", "unsqueeze", "squeeze", "flatten", "contiguous", "clone", "detach",
    "t", "permute", "transpose", "view_as", "reshape_as",
})


def base_of(expr: str | None) -> str | None:
    """``target`` for ``target.view(4, 1)`` or ``y.unsqueeze(1).clone()``; the expression
    itself when nothing is stripped; None when it is not a plain name underneath."""
    if expr is None:
        return None
    try:
        node: ast.expr = syntax_tree.parse(expr, mode="eval").body
    except SyntaxError:
        return None
    while True:
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in RESHAPES):
            node = node.func.value
        elif isinstance(node, ast.Attribute) and node.attr in ("T", "mT"):
            node = node.value
        else:
            break
    return node.id if isinstance(node, ast.Name) else None


@dataclass
class Context:
    """What the engine knows about the failing (or warning) line of one run."""

    source: Source | None
    line: int | None
    locals: dict[str, Snapshot] = field(default_factory=dict)

    @cached_property
    def calls(self) -> list[CallSite]:
        if self.source is None or self.line is None:
            return []
        return self.source.calls_at(self.line)

    @cached_property
    def statements(self) -> list[ast.stmt]:
        if self.source is None or self.line is None:
            return []
        return self.source.statements_at(self.line)

    def matmul_operands(self) -> tuple[str, str] | None:
        for stmt in self.statements:
            for node in ast.walk(stmt):
                if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
                    return code_text(node.left), code_text(node.right)
        return None

    def grad_owner(self) -> str | None:
        """``w`` for a line that reads ``w.grad``."""
        for stmt in self.statements:
            for node in ast.walk(stmt):
                if isinstance(node, ast.Attribute) and node.attr == "grad":
                    return code_text(node.value)
        return None

    def assigned_target(self) -> str | None:
        """``x`` for ``x = ...``, ``x.requires_grad = ...``, ``x[0] = ...``, ``x -= ...``."""
        for stmt in self.statements:
            targets: list[ast.expr] = []
            if isinstance(stmt, ast.Assign):
                targets = list(stmt.targets)
            elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign)):
                targets = [stmt.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    return target.id
                if isinstance(target, (ast.Attribute, ast.Subscript)):
                    return code_text(target.value)
        return None

    def binop_operands(self) -> tuple[str, str] | None:
        for stmt in self.statements:
            for node in ast.walk(stmt):
                if isinstance(node, ast.BinOp):
                    return code_text(node.left), code_text(node.right)
        return None

    def subject(self, focus: list[str]) -> tuple[str | None, str | None, CallSite | None]:
        """The variable (and second operand) the failing call was made on, trying the
        entry's focus tokens in order; without focus, the outermost call on the line."""
        for token in focus:
            if token == ".grad":
                owner = self.grad_owner()
                if owner:
                    return owner, None, None
            elif token == "@":
                pair = self.matmul_operands()
                if pair:
                    return pair[0], pair[1], None
            elif token == "binop":
                pair = self.binop_operands()
                if pair:
                    return pair[0], pair[1], None
            elif token == "target":
                target = self.assigned_target()
                if target:
                    return target, None, None
            elif token == "module":
                site = next((c for c in self.calls if _module_like(c)), None)
                if site is not None:
                    return self._operands(site)
            else:
                site = next((c for c in self.calls if c.name == token), None)
                if site is not None:
                    return self._operands(site)
        if not focus and self.calls:
            return self._operands(self.calls[0])
        return None, None, None

    @staticmethod
    def _operands(site: CallSite) -> tuple[str | None, str | None, CallSite]:
        if site.is_method:
            return site.receiver, site.args[0] if site.args else None, site
        first = site.args[0] if site.args else None
        second = site.args[1] if len(site.args) > 1 else None
        return first, second, site

    def snapshot(self, expr: str | None) -> TensorSnapshot | None:
        if expr is None:
            return None
        snap = self.locals.get(expr)
        return snap if isinstance(snap, TensorSnapshot) else None

    def base_snapshot(self, expr: str | None) -> tuple[str, TensorSnapshot] | None:
        """The expression's own snapshot, else that of the variable it reshapes: the dtype
        and values are the same, the shape may not be (so it is shown under that name)."""
        snap = self.snapshot(expr)
        if expr is not None and snap is not None:
            return expr, snap
        base = base_of(expr)
        snap = self.snapshot(base)
        return (base, snap) if base is not None and snap is not None else None

    def line_node(self) -> ast.AST | None:
        return self.statements[0] if self.statements else None


def _holds(cond: Conditions, ctx: Context, var: str | None, message: re.Match[str] | None) -> bool:
    """Every condition the entry states holds. A fact that cannot be known (no parsed source,
    no snapshot of the variable) fails the condition that needs it: no guessing."""
    names = {c.name for c in ctx.calls}
    if cond.line_calls is not None and not names & set(cond.line_calls):
        return False
    if cond.line_not_calls is not None and names & set(cond.line_not_calls):
        return False
    node = ctx.line_node()
    source = ctx.source
    snap = ctx.snapshot(var)
    based = ctx.base_snapshot(var)
    base_snap = based[1] if based is not None else None
    facts: list[tuple[object, Callable[[], object]]] = [
        (cond.line_has_matmul_operator, lambda: ctx.matmul_operands() is not None),
        (cond.line_calls_module, lambda: any(_module_like(c) for c in ctx.calls)),
        (cond.none_is_grad, lambda: _none_is_grad(ctx, message)),
        (cond.line_in_no_grad,
         lambda: None if node is None or source is None else source.in_no_grad(node)),
        (cond.line_in_loop,
         lambda: None if node is None or source is None
         else source.enclosing_loop(node) is not None),
        (cond.line_is_inplace_update, lambda: _is_inplace_update(ctx)),
        (cond.code_sets_requires_grad_false,
         lambda: None if source is None else _sets_requires_grad_false(source)),
        (cond.var_dtype, lambda: None if base_snap is None else dtype_kind(base_snap.dtype)),
        (cond.var_is_leaf, lambda: None if snap is None else snap.is_leaf),
        (cond.var_requires_grad, lambda: None if snap is None else snap.requires_grad),
        (cond.message_types_differ_in_device, lambda: _types_differ_in_device(message)),
    ]
    for wanted, fact in facts:
        if wanted is not None and fact() != wanted:
            return False
    if cond.var_dtype_is is not None and (
        base_snap is None or base_snap.dtype not in cond.var_dtype_is
    ):
        return False
    needs_source = any(
        v is not None
        for v in (cond.source_calls, cond.source_in_no_grad, cond.source_defined_outside_loop,
                  cond.source_has_requires_grad)
    )
    return not needs_source or (
        source is not None and var is not None and _source_conditions(cond, ctx, var)
    )


def _none_is_grad(ctx: Context, message: re.Match[str] | None) -> bool:
    """The failing line uses an ``X.grad`` the way the NoneType error says the None was used:
    ``X.grad.attr`` for "has no attribute 'attr'", ``X.grad[...]`` for "not subscriptable",
    an operand of ``+ - * /`` for "unsupported operand"."""
    if message is None:
        return False
    text = message.group(0)
    attr = message.groupdict().get("attr")

    def is_grad(node: ast.AST) -> bool:
        return isinstance(node, ast.Attribute) and node.attr == "grad"

    for stmt in ctx.statements:
        for node in ast.walk(stmt):
            if attr:
                used = isinstance(node, ast.Attribute) and node.attr == attr and is_grad(node.value)
            elif "subscriptable" in text:
                used = isinstance(node, ast.Subscript) and is_grad(node.value)
            elif isinstance(node, ast.BinOp):
                used = is_grad(node.left) or is_grad(node.right)
            elif isinstance(node, ast.AugAssign):
                used = is_grad(node.target) or is_grad(node.value)
            else:
                used = False
            if used:
                return True
    return False


def _types_differ_in_device(message: re.Match[str] | None) -> bool | None:
    """For 'Input type (torch.cuda.FloatTensor) and weight type (torch.FloatTensor)'."""
    if message is None or not message.groupdict():
        return None
    return len({"cuda" in (v or "") for v in message.groupdict().values()}) == 2


def _module_like(site: CallSite) -> bool:
    """``self.fc1(x)``, ``net(x)``, ``nn.Linear(3, 1)(x)``: a call of an object, not a tensor
    method or a library function."""
    func = site.node.func
    if isinstance(func, ast.Call):  # built and called at once: nn.CrossEntropyLoss()(out, y)
        return True
    if isinstance(func, ast.Attribute):
        on_self = isinstance(func.value, ast.Name) and func.value.id == "self"
        return on_self and func.attr != "forward"
    if isinstance(func, ast.Name):
        return func.id not in {"print", "float", "int", "len", "list", "range", "sum", "max",
                               "min", "abs", "round", "bool", "tuple", "zip", "enumerate"}
    return False


def _is_inplace_update(ctx: Context) -> bool:
    """``w -= lr * w.grad`` / ``w.sub_(lr * w.grad)``: a manual optimiser step."""
    for stmt in ctx.statements:
        uses_grad = any(
            isinstance(n, ast.Attribute) and n.attr == "grad" for n in ast.walk(stmt)
        )
        if not uses_grad:
            continue
        if isinstance(stmt, ast.AugAssign):
            return True
        if any(
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute)
            and n.func.attr in INPLACE_UPDATE_METHODS
            for n in ast.walk(stmt)
        ):
            return True
    return False


def _is_false(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is False


def _sets_requires_grad_false(source: Source) -> bool:
    """``p.requires_grad = False`` or ``p.requires_grad_(False)`` anywhere in the code."""
    for node in ast.walk(source.tree):
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Attribute) and t.attr == "requires_grad"
                    for t in node.targets)
            and _is_false(node.value)
        ):
            return True
        if (
            isinstance(node, ast.Call)
            and call_name(node) == "requires_grad_"
            and node.args
            and _is_false(node.args[0])
        ):
            return True
    return False


def _locals_require_grad(ctx: Context, nodes: list[ast.AST]) -> bool:
    """A tensor the failing frame holds, named in the source of var, requires grad: the
    run itself contradicts a claim that nothing requires grad."""
    names = {n.id for node in nodes for n in ast.walk(node) if isinstance(n, ast.Name)}
    return any(
        isinstance(snap, TensorSnapshot) and snap.requires_grad
        for name, snap in ctx.locals.items()
        if name in names
    )


def _assigned_only_outside(ctx: Context, name: str, loop: ast.For | ast.While) -> bool:
    assert ctx.source is not None
    statements = [s for s, _ in ctx.source.assignments_to(name)] if name.isidentifier() else []
    end = loop.end_lineno or loop.lineno
    return bool(statements) and all(not (loop.lineno <= s.lineno <= end) for s in statements)


def _built_before_loop(
    ctx: Context, var: str, loop: ast.For | ast.While, nodes: list[ast.AST]
) -> dict[str, object]:
    """The part of the graph that ``var.backward()`` walks that was built once, before the
    loop, as the facts the words need: ``var`` itself (``built_self``), or a tensor with
    history in its backward slice (``built_part``), assigned only outside the loop, with the
    line that built it. Each pass then goes back through the same, already freed, part.
    Empty when neither is shown: a text never says "computed before the loop" of a value
    the loop computes."""
    if _assigned_only_outside(ctx, var, loop):
        return {"built_self": f"`{var}`", "built_line": _last_assignment(ctx, var)}
    names = {n.id for node in nodes for n in ast.walk(node) if isinstance(n, ast.Name)}
    for name, snap in ctx.locals.items():
        if name in names and isinstance(snap, TensorSnapshot) and snap.grad_fn is not None \
                and _assigned_only_outside(ctx, name, loop):
            return {"built_part": f"`{name}`", "built_line": _last_assignment(ctx, name)}
    return {}


def _last_assignment(ctx: Context, name: str) -> int | None:
    assert ctx.source is not None
    lines = [s.lineno for s, _ in ctx.source.assignments_to(name)]
    return max(lines) if lines else None


TENSOR_ONLY = frozenset({"numpy", "detach", "backward", "item", "requires_grad_", "cpu",
                         "cuda", "retain_grad"})
"""Methods only a tensor has (a list or a number raises AttributeError first): the line
calling one on a value shows that it is a tensor."""


def _tensor_facts(ctx: Context, var: str | None) -> dict[str, object]:
    """The subject as ``tensor``/``tensor_code`` where the run shows it is a tensor: its
    snapshot, or a tensor-only method the failing line calls on it. A text that says "the
    tensor {tensor}" is not used of a list of tensors or a dict's entry."""
    if var is None:
        return {}
    shown = ctx.snapshot(var) is not None or any(
        c.is_method and c.receiver == var and c.name in TENSOR_ONLY for c in ctx.calls)
    return {"tensor": f"`{var}`", "tensor_code": var} if shown else {}


def loop_facts(ctx: Context, var: str | None) -> dict[str, object]:
    """What of ``var``'s graph the loop around the failing line did not build (see
    :func:`_built_before_loop`); empty when there is no such loop or part."""
    node = ctx.line_node()
    if ctx.source is None or var is None or node is None:
        return {}
    loop = ctx.source.enclosing_loop(node)
    if loop is None:
        return {}
    return _built_before_loop(ctx, var, loop, ctx.source.source_of(var, ctx.line))


def _source_conditions(cond: Conditions, ctx: Context, var: str) -> bool:
    assert ctx.source is not None
    nodes = ctx.source.source_of(var, ctx.line)
    if cond.source_calls is not None and not calls_in(nodes) & set(cond.source_calls):
        return False
    if cond.source_in_no_grad is not None:
        statements = [n for n in nodes if isinstance(n, ast.stmt)]
        inside = any(ctx.source.in_no_grad(s) for s in statements)
        if inside != cond.source_in_no_grad:
            return False
    if cond.source_has_requires_grad is not None:
        found = makes_requires_grad(nodes, ctx.source) or _locals_require_grad(ctx, nodes)
        if found != cond.source_has_requires_grad:
            return False
    if cond.source_defined_outside_loop is not None:
        node = ctx.line_node()
        loop = ctx.source.enclosing_loop(node) if node is not None else None
        if loop is None:
            return False
        outside = bool(_built_before_loop(ctx, var, loop, nodes))
        if outside != cond.source_defined_outside_loop:
            return False
    return True


# ---------------------------------------------------------------------- text


def _shown(code: str | None) -> str | None:
    """An operand's code as prose shows it: as the learner wrote it, without the
    parentheses :func:`source.code_text` put around an expression so that a method can be
    appended in a snippet (```(1 - mask) * dist``, not ``((1 - mask) * dist)``)."""
    if not code:
        return None
    depth = 0
    for n, char in enumerate(code):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0 and n < len(code) - 1:
            return f"`{code}`"  # the first parenthesis closes before the end: its own
    return f"`{code[1:-1]}`" if code.startswith("(") and depth == 0 else f"`{code}`"


def _values(
    ctx: Context,
    var: str | None,
    var2: str | None,
    site: CallSite | None,
    message: re.Match[str] | None,
    line: int | None,
    shapes: Iterable[str] = (),
) -> dict[str, object]:
    snap, snap2 = ctx.snapshot(var), ctx.snapshot(var2)
    base = base_of(var) or var
    common: dict[str, object] = {
        "var": _shown(var),
        "var_code": var,
        "var_base": _shown(base),
        "var_base_code": base,
        "var2": _shown(var2),
        "var2_code": var2,
        "shape": shape_text(snap.shape) if snap else None,
        "dtype": snap.dtype if snap else None,
        "device": snap.device if snap else None,
        "requires_grad": str(snap.requires_grad) if snap else None,
        "grad_fn": (snap.grad_fn or "None") if snap else None,
        "shape2": shape_text(snap2.shape) if snap2 else None,
        "dtype2": snap2.dtype if snap2 else None,
        "line": str(line) if line is not None else None,
        "call": source_text(site.node) if site else None,
        "callee": f"`{site.callee}`" if site else None,
    }
    if message is not None:
        groups = message.groupdict()
        common.update(groups)
        for name in shapes:
            if groups.get(name) is not None:
                common[name] = shape_from_torch(groups[name])
    return {key: WORDS[key] if value is None and key in WORDS else value
            for key, value in common.items()}


def _details(ctx: Context, var: str | None) -> Text | None:
    """The subject's recorded values; for ``target.view(4, 1)`` those of ``target``, under
    its own name (its shape is the one before the reshape)."""
    based = ctx.base_snapshot(var)
    if based is None:
        return None
    var, snap = based
    facts = (
        f"shape {shape_text(snap.shape)}, {snap.dtype}, {snap.device}, "
        f"requires_grad={snap.requires_grad}, is_leaf={snap.is_leaf}, "
        f"grad_fn={snap.grad_fn or 'None'}"
    )
    zh_facts = (
        f"形状 {shape_text(snap.shape)}，{snap.dtype}，{snap.device}，"
        f"requires_grad={snap.requires_grad}，is_leaf={snap.is_leaf}，"
        f"grad_fn={snap.grad_fn or 'None'}"
    )
    return T(f"`{var}`: {facts}", f"`{var}`：{zh_facts}")


def subjects(
    entry: Entry, ctx: Context
) -> list[tuple[str | None, str | None, CallSite | None]]:
    """The (var, var2, call) readings the entry allows, in order: the focus call's operands
    as written, swapped for a loss's target ('second'), or both ways ('either')."""
    var, var2, site = ctx.subject(entry.focus)
    if entry.subject == "second":
        # no second operand found (a module call picked up first): no subject, never the first
        return [(var2, var, site)]
    if entry.subject == "either" and var2 is not None:
        return [(var, var2, site), (var2, var, site)]
    return [(var, var2, site)]


def build(
    entry: Entry,
    ctx: Context,
    message: re.Match[str] | None,
    line: int | None,
    reading: tuple[str | None, str | None, CallSite | None] | None = None,
    facts: Values | None = None,
) -> Diagnosis | None:
    """The entry's words for the run. ``facts``: what the evidence established (a check's
    findings), in place of what the failing line alone suggests, so the text and the chain
    say the same thing."""
    var, var2, site = reading if reading is not None else subjects(entry, ctx)[0]
    shapes = entry.match.shapes if entry.match is not None else ()
    values = _values(ctx, var, var2, site, message, line, shapes)
    values.update(_tensor_facts(ctx, var))
    if entry.conditions.source_defined_outside_loop:
        values.update(loop_facts(ctx, var))
    if facts is not None:
        values.update({k: v for k, v in facts.items() if k in FACT_PLACEHOLDERS})
    return _diagnosis(entry, ctx, var, values, line)


def _diagnosis(
    entry: Entry,
    ctx: Context,
    var: str | None,
    values: Values,
    line: int | None,
) -> Diagnosis | None:
    """The entry's words filled for this run; None when a text has no variant whose facts
    the run showed (the entry then does not fit: no placeholder is ever shown)."""
    words = [first_fitting(entry.options(field), values) for field in TEXT_FIELDS]
    title, explanation, fix = words
    if title is None or explanation is None or fix is None:
        return None
    return Diagnosis(
        id=entry.id,
        severity=entry.severity,
        title=title,
        explanation=explanation,
        fix=fix,
        line=line,
        variable=var,
        details=_details(ctx, var),
        lesson_ref=entry.lesson_ref,
    )


def match_error(error: ErrorInfo, code: str, source: Source | None = None) -> Diagnosis:
    """The first catalog entry that fits the error, else a generic diagnosis."""
    source = source if source is not None else Source.of(code)
    ctx = Context(source=source, line=error.line, locals=dict(error.locals))
    entries = load_catalog().errors
    found = _first_fit(entries, "exception", error.type, error.message, ctx, error.line)
    if found is not None and source is not None and error.traceback:
        # a call that only hands its parameters on (a forward that calls its layers): the
        # line that gave it what it failed on is the caller's
        given = source.calls.line_that_gave([f.line for f in error.traceback])
        if given is not None and given != error.line:
            moved = _first_fit(entries, "exception", error.type, error.message,
                               Context(source=source, line=given), given)
            found = moved if moved is not None and moved.id == found.id else found
    return found if found is not None else generic_error(error, ctx)


def match_warning(warning: WarningInfo, source: Source | None) -> Diagnosis | None:
    """The first catalog entry that fits the warning; None for warnings nobody catalogued."""
    ctx = Context(source=source, line=warning.line)
    entries = load_catalog().warnings
    return _first_fit(entries, "warning", warning.category, warning.message, ctx, warning.line)


def _first_fit(
    entries: Iterable[Entry],
    kind: Literal["exception", "warning"],
    name: str,
    message: str,
    ctx: Context,
    line: int | None,
) -> Diagnosis | None:
    """The first entry whose ``kind`` names ``name``, whose regex finds ``message`` and whose
    conditions hold for the run."""
    for entry in entries:
        assert entry.match is not None
        if name not in (getattr(entry.match, kind) or ()):
            continue
        found = entry.match.pattern().search(message)
        if found is None:
            continue
        for reading in subjects(entry, ctx):
            if _holds(entry.conditions, ctx, reading[0], found):
                built = build(entry, ctx, found, line, reading)
                if built is not None:
                    return built
    return None


SYNTAX_ERRORS = ("SyntaxError", "IndentationError", "TabError")
GENERIC_FIX = T(
    "Look at the values on that line: print the shape, dtype and device of each tensor "
    "it uses (its `.shape`, `.dtype` and `.device`) and compare them with what the "
    "call expects.",
    "检查这一行用到的值：打印每个张量的形状、类型和设备"
    "（它的 `.shape`、`.dtype` 和 `.device`），与该调用的要求对比。",
)


def generic_fix(var: str | None) -> Text:
    """What to look at for an error nobody catalogued: the values on the line, with the
    learner's own tensor where the run showed one (never a template's ``t``)."""
    if var is None:
        return GENERIC_FIX
    show = f"`print({var}.shape, {var}.dtype, {var}.device)`"
    return T("Look at the values on that line: print the shape, dtype and device of each "
             f"tensor it uses ({show}, and the same for the others) and compare them with what "
             "the call expects.",
             f"检查这一行用到的值：打印每个张量的形状、类型和设备（{show}，其他张量同样），"
             "与该调用的要求对比。")
# Nothing ran, so there are no values to print: point at the spelling of the line instead.
SYNTAX_FIX = T(
    "Python could not read the code, so nothing ran. Check that line (and the one above it) "
    "for a missing comma, bracket, colon or quote, or wrong indentation.",
    "Python 无法读懂这段代码，所以什么都没有运行。检查这一行（以及上一行）是否缺少逗号、"
    "括号、冒号或引号，或者缩进不对。",
)


TENSOR_WORDS = re.compile(r"shape|size|dimension|\bdims?\b|dtype|device|cuda|float|double"
                          r"|long|tensor", re.IGNORECASE)
NEUTRAL_FIX = T(
    "Print each value that line uses and its type, and compare them with what the message "
    "says the call expects.",
    "打印这一行用到的每个值及其类型，与错误信息所说的调用要求对比。",
)


CODE_KINDS = frozenset({"module", "function", "builtin_function_or_method", "type", "method"})
"""Kinds of names a line calls or reads code from, not values it is given."""


def _argument_names(line: str) -> set[str]:
    try:
        tree = syntax_tree.parse(line.strip().rstrip(":") or "pass")
    except SyntaxError:
        return set()
    return {n.id for call in ast.walk(tree) if isinstance(call, ast.Call)
            for arg in (*call.args, *(k.value for k in call.keywords))
            for n in ast.walk(arg) if isinstance(n, ast.Name)}


def neutral_fix(error: ErrorInfo) -> Text:
    """What to print for a line whose values are not tensors: its own names where the run
    showed them."""
    values = [n for n, k in error.kinds.items() if n != "self" and k not in CODE_KINDS]
    given = _argument_names(error.source_line or "")
    names = sorted(values, key=lambda n: n not in given)[:2]  # what a call was given first
    if not names:
        return NEUTRAL_FIX
    show = "`print(" + ", ".join(f"type({n}), {n}" for n in names) + ")`"
    return T(f"Print each value that line uses and its type ({show}), and compare them with "
             "what the message says the call expects.",
             f"打印这一行用到的每个值及其类型（{show}），与错误信息所说的调用要求对比。")


def evidence_fix(error: ErrorInfo, ctx: Context, var: str | None) -> Text:
    """What to do about an error nobody catalogued, from what the run showed: a name on the
    line that holds the kind of value the message names (and where it got it), a name never
    defined, a torch call's parameters; the tensors on the line; else what to print."""
    wrong = _wrong_kind(error, ctx) or _undefined(error, ctx) or _arguments(error)
    if wrong is not None:
        return wrong
    # the remedy torch's message states is not given as the fix: untried on this program, it
    # was judged wrong twice in three (corpus13: SparseAdam for a sparse weight, `~` on a bool
    # mask that is then subtracted); the message, quoted above, already says it
    message = for_learner(error.message)
    if var is not None or TENSOR_WORDS.search(message):
        return generic_fix(var)
    return neutral_fix(error)


def _wrong_kind(error: ErrorInfo, ctx: Context) -> Text | None:
    """A name on the failing line holding the kind of value the message complains about
    (``'bool' object is not subscriptable`` and ``dataset`` is a bool), with where it got
    it: its parameter's caller (torch's own code, or a line of the learner's), or its last
    assignment."""
    named = [(n, k) for n, k in error.kinds.items() if n != "self" and re.search(
        rf"'(?:[\w.]+\.)?{re.escape(k)}' object|\b(?:not|got|of type|type) '?{re.escape(k)}\b",
        error.message)]
    if not named or error.line is None:
        return None
    name, kind = named[0]
    line = error.line
    where_en, where_zh = "", ""
    frames = error.traceback
    function = _function_holding(ctx.source, frames[-1].function, line) if frames else None
    if function is not None and name in {a.arg for a in (*function.args.posonlyargs,
                                                        *function.args.args,
                                                        *function.args.kwonlyargs)}:
        last = frames[-1]
        if last.called_by:
            where_en = (f" `{name}` is a parameter of `{last.function}`, and the run shows "
                        f"`{last.called_by}` calling `{last.function}`, not your code: that "
                        "call gave it this value.")
            where_zh = (f"`{name}` 是 `{last.function}` 的参数，而运行显示调用 "
                        f"`{last.function}` 的是 `{last.called_by}`，不是你的代码：是那次调用"
                        "给了它这个值。")
        elif len(frames) >= 2:
            caller = frames[-2]
            where_en = (f" `{name}` is a parameter of `{last.function}`: line {caller.line} "
                        f"(`{caller.source}`) gave it this value.")
            where_zh = (f"`{name}` 是 `{last.function}` 的参数：第 {caller.line} 行"
                        f"（`{caller.source}`）给了它这个值。")
    elif ctx.source is not None:
        made = [stmt for stmt, _ in ctx.source.assignments_to(name) if stmt.lineno < line]
        if made:
            stmt = made[-1]
            value = getattr(stmt, "value", None)
            shown = (f"{source_text(stmt.targets[0])} = {source_text(value)}"
                     if isinstance(stmt, ast.Assign) and value is not None
                     else ast.unparse(stmt)).splitlines()[0]
            where_en = f" It was last set on line {stmt.lineno}: `{shown}`."
            where_zh = f"它最后一次赋值在第 {stmt.lineno} 行：`{shown}`。"
    held = "`None`" if kind == "NoneType" else \
        f"{'an' if kind[0] in 'AEIOUaeiou' else 'a'} `{kind}`"
    held_zh = "`None`" if kind == "NoneType" else f"一个 `{kind}`"
    return T(f"On line {line}, `{name}` holds {held}, and the line uses it as something "
             f"else.{where_en} Follow `{name}` back to where it gets that value "
             f"(`print(type({name}))` there) and give it the value you meant.",
             f"第 {line} 行的 `{name}` 是 {held_zh}，而这一行把它当作别的东西使用。"
             f"{where_zh}沿着 `{name}` 往回找到它得到这个值的地方（在那里 `print(type({name}))`），"
             "让它拿到你想要的值。")


USUAL_IMPORTS = {"nn": "import torch.nn as nn", "F": "import torch.nn.functional as F",
                 "optim": "import torch.optim as optim", "np": "import numpy as np",
                 "torch": "import torch", "math": "import math", "copy": "import copy"}
"""The names learners use without importing them, and the import that binds each."""


def _undefined(error: ErrorInfo, ctx: Context) -> Text | None:
    """A NameError: the import that binds a usual alias (``nn``, ``F``), else the name the
    program binds that is spelt closest."""
    found = re.match(r"name '(\w+)' is not defined", error.message)
    if error.type != "NameError" or found is None:
        return None
    name = found[1]
    if name in USUAL_IMPORTS:
        line = USUAL_IMPORTS[name]
        return T(f"`{name}` is never imported: add `{line}` at the top of the program.",
                 f"`{name}` 从未被导入：在程序开头加上 `{line}`。")
    known = ctx.source.bound_names() - {name} if ctx.source is not None else set()
    close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.75)
    if close:
        return T(f"Nothing in the program is called `{name}`: did you mean `{close[0]}`?",
                 f"程序里没有叫 `{name}` 的东西：你是想写 `{close[0]}` 吗？")
    where = f"line {error.line}" if error.line else "the line that uses it"
    where_zh = f"第 {error.line} 行" if error.line else "用到它的那一行"
    return T(f"Give `{name}` a value (or import it) before {where} uses it, in a place the "
             "program runs first.",
             f"在{where_zh}用到 `{name}` 之前先给它赋值（或导入它），并且放在程序先运行到的地方。")


def _arguments(error: ErrorInfo) -> Text | None:
    """A torch call given the wrong arguments: what the run found it to be, its parameters,
    and what its documentation says of the one the message names."""
    callee = error.callee
    if callee is None:
        return None
    where = f"line {error.line}" if error.line else "the failing line"
    where_zh = f"第 {error.line} 行" if error.line else "出错的那一行"
    head = f"`{callee.name}{callee.signature}`"
    param = callee.parameter
    if param and callee.reason == "constraint":
        doc = f" (its documentation: \u201c{callee.parameter_doc}\u201d)" if \
            callee.parameter_doc else ""
        doc_zh = f"（文档说明：\u201c{callee.parameter_doc}\u201d）" if callee.parameter_doc \
            else ""
        return T(f"The values {where} gives `{callee.name}` as `{param}`{doc} break the "
                 "constraint the message names: look where they are made and what takes them "
                 "out of that range (a nan among them was made earlier).",
                 f"{where_zh}作为 `{param}` 传给 `{callee.name}` 的值{doc_zh}不满足错误信息所说"
                 "的约束：看看它们在哪里得到、是什么让它们超出了这个范围（其中若有 nan，是更早的"
                 "运算产生的）。")
    if param and param in re.findall(r"\w+", callee.signature):
        said = f" Its documentation says of `{param}`: \u201c{callee.parameter_doc}\u201d" if \
            callee.parameter_doc else ""
        said_zh = f"文档对 `{param}` 的说明：\u201c{callee.parameter_doc}\u201d" if \
            callee.parameter_doc else ""
        return T(f"{head} needs `{param}`, and {where} calls it without.{said} Pass it.",
                 f"{head} 需要 `{param}`，而{where_zh}调用它时没有传。{said_zh}请把它传进去。")
    names = [n for n in re.findall(r"(\w+)(?==|,|\))", callee.signature) if n != "self"]
    if param:
        close = difflib.get_close_matches(param, names, n=1, cutoff=0.7)
        if close:
            return T(f"{head} has no parameter `{param}`: did you mean `{close[0]}`?",
                     f"{head} 没有参数 `{param}`：你是想写 `{close[0]}` 吗？")
        return T(f"{head} has no parameter `{param}`: its parameters are the ones shown; "
                 f"pass `{param}` where it belongs, or drop it.",
                 f"{head} 没有参数 `{param}`：它的参数就是上面列出的这些；"
                 f"把 `{param}` 传给需要它的地方，或者去掉它。")
    return T(f"Compare what {where} passes with the parameters of {head}.",
             f"把{where_zh}传入的参数与 {head} 的参数逐个对比。")


def _function_holding(source: Source | None, name: str, line: int
                      ) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    if source is None:
        return None
    for node in ast.walk(source.tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name \
                and node.lineno <= line <= (node.end_lineno or node.lineno):
            return node
    return None


def generic_error(error: ErrorInfo, ctx: Context) -> Diagnosis:
    # the faces show the line next to the title, so the title itself does not repeat it
    message = for_learner(error.message).strip()
    first = message.splitlines()[0] if message else error.type
    first = first.rstrip(".。")
    stop_en = "" if first.endswith(("?", "!")) else "."
    where_en = f" on line {error.line}" if error.line else ""
    where_zh = f"（第 {error.line} 行）" if error.line else ""
    code_line = (error.source_line or "").strip()
    shown = f": `{code_line}`" if code_line else ""
    shown_zh = f"：`{code_line}`" if code_line else ""
    var, _, _ = ctx.subject([])
    syntax = error.type in SYNTAX_ERRORS
    return Diagnosis(
        id="generic",
        severity="error",
        title=T(error.type, error.type),
        explanation=T(
            f"Python stopped{where_en}{shown} with {error.type}: {first}{stop_en} This is not "
            "one of the autograd mistakes the tutor knows, so read the message closely.",
            f"程序{where_zh}停止{shown_zh}，错误为 {error.type}：{first}。这不是导师已知的 "
            "autograd 常见错误，请仔细阅读这条信息。",
        ),
        fix=SYNTAX_FIX if syntax else evidence_fix(error, ctx, var if ctx.snapshot(var)
                                                   else None),
        line=error.line,
        variable=None if syntax else var,
        details=None if syntax else _details(ctx, var),
        lesson_ref="errors/intro",
        generic=True,
    )


OUTCOME_TEXT: dict[str, tuple[Text, Text, Text]] = {
    "timeout": (
        T("The program ran too long", "程序运行时间过长"),
        T("It did not finish within the time limit: often a loop that never ends.",
          "程序没有在时间限制内结束：常见原因是一个永不结束的循环。"),
        T("Check the stopping condition of every `while` loop and the ranges of `for` loops.",
          "检查每个 `while` 循环的结束条件以及 `for` 循环的范围。"),
    ),
    "memory": (
        T("The program used too much memory", "程序使用了过多内存"),
        T("It tried to allocate more memory than a run may use: usually a tensor far larger "
          "than intended, or a graph kept alive across many iterations.",
          "程序申请的内存超过了限制：通常是某个张量远大于预期，或计算图在多次迭代中一直被保留。"),
        T("Print the shapes of the big tensors; store `loss.item()` rather than `loss` in "
          "lists so old graphs can be freed.",
          "打印大张量的形状；在列表中保存 `loss.item()` 而不是 `loss`，以便释放旧的计算图。"),
    ),
    "output_limit": (
        T("The program printed too much", "程序输出过多"),
        T("Its output passed the size limit, so it was cut.",
          "程序输出超过了大小限制，已被截断。"),
        T("Print less: a summary such as `t.shape` or `t.mean()` instead of whole tensors.",
          "减少输出：打印 `t.shape` 或 `t.mean()` 等摘要，而不是整个张量。"),
    ),
    "crashed": (
        T("The program crashed", "程序崩溃"),
        T("The process died from a signal without a Python error.",
          "进程因信号终止，没有 Python 错误信息。"),
        T("Run smaller pieces of the code to find the statement that crashes.",
          "分段运行代码，找出导致崩溃的语句。"),
    ),
}


def generic_outcome(result: RunResult) -> Diagnosis | None:
    """A run stopped by a limit (time, memory, output) or a crash: what that usually means."""
    texts = OUTCOME_TEXT.get(result.outcome)
    if texts is None:
        return None
    title, explanation, fix = texts
    return Diagnosis(
        id="generic",
        severity="error",
        title=title,
        explanation=explanation,
        fix=fix,
        line=result.error.line if result.error is not None else None,  # where it was stopped
        lesson_ref="errors/intro",
        generic=True,
    )


def build_pitfall(entry: Entry, line: int, variable: str | None,
                  facts: Values | None = None) -> Diagnosis | None:
    """A static pitfall's words; ``facts``: what the evidence established (see
    :func:`build`)."""
    ctx = Context(source=None, line=line)
    values = _values(ctx, variable, None, None, None, line)
    values.update({k: v for k, v in (facts or {}).items() if k in FACT_PLACEHOLDERS})
    return _diagnosis(entry, ctx, variable, values, line)

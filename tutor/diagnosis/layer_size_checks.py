"""A normalising or attention layer built for one size and given another: the size written
where the layer is built is the one to change, where the input's size comes from an earlier
layer of the program (its lineage says which) and the built size is nowhere else in the input
(then the input's dimensions are in another order, a layout question, not this one).

The layers and the dimension each reads (torch checks it in the layer and names both sizes):
``LayerNorm`` the last, ``BatchNorm1d/2d/3d`` the channels (dimension 1),
``MultiheadAttention`` the embedding (the last). Recurrent layers are
:func:`tutor.diagnosis.shape_checks._rnn_size`'s. The change tried writes the program's own
name for the size the input has where there is one (a parameter of the constructor's
function, a constant of the module), else the number.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import Fix, replace_node
from tutor.diagnosis.flow import module_label, text
from tutor.diagnosis.lineage import Lineage, shape_text
from tutor.diagnosis.operand_checks import _int_arg, failed_op
from tutor.diagnosis.shape_checks import _constructor, _said
from tutor.diagnosis.verify import runs_clean
from tutor.i18n import T


@dataclass(frozen=True)
class Sized:
    """How one kind of layer reports a size mismatch, and where its size is written."""

    kinds: frozenset[str]
    message: re.Pattern[str]
    built_first: bool
    """The message names the built size before the input's."""
    dim: int
    """The input's dimension the layer reads."""
    keyword: str
    """The constructor's argument (its first) that holds the size."""


LAYERS = (
    Sized(frozenset({"LayerNorm"}), re.compile(
        r"Given normalized_shape=\[(\d+)\], expected input with shape \[\*, \d+\], but got "
        r"input of size\s*\[[\d, ]*?(\d+)\]"), True, -1, "normalized_shape"),
    Sized(frozenset({"BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm"}),
          re.compile(r"running_mean should contain (\d+) elements not (\d+)"), False, 1,
          "num_features"),
    Sized(frozenset({"MultiheadAttention"}), re.compile(
        r"was expecting embedding dimension of (\d+), but got (\d+)"), True, -1, "embed_dim"),
)


def _given(value: ast.expr | None, size: int) -> bool:
    return isinstance(value, ast.Constant) and value.value == size and \
        not isinstance(value.value, bool)


def _names_holding(ctx: Ctx, call: ast.Call, size: int) -> list[str]:
    """Names the program gives ``size`` where the layer is built: a parameter of the
    enclosing function whose default is that size or that every call of the function (of
    the class, for ``__init__``) passes it, and module-level constants."""
    names: list[str] = []
    function = ctx.flow.function_at(call.lineno)
    if function is not None:
        args = function.args
        positional = args.posonlyargs + args.args
        defaults = dict(zip([a.arg for a in positional[len(positional) - len(args.defaults):]],
                            args.defaults, strict=True))
        defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults,
                                                  strict=True) if d is not None})
        owner = ctx.flow.parents.get(function)
        callee = owner.name if function.name == "__init__" and isinstance(
            owner, ast.ClassDef) else function.name
        calls = [c for c in ctx.flow.calls if text(c.func).split(".")[-1] == callee]
        order = [a.arg for a in positional][1 if function.name == "__init__" else 0:]
        for param in order + [a.arg for a in args.kwonlyargs]:
            passed = [next((k.value for k in c.keywords if k.arg == param), None) or (
                c.args[order.index(param)] if param in order and order.index(param) < len(
                    c.args) else None) for c in calls]
            if (calls and all(_given(v, size) for v in passed)) or (
                    not calls and _given(defaults.get(param), size)):
                names.append(param)
    for stmt in ctx.flow.tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(
                stmt.targets[0], ast.Name) and _given(stmt.value, size):
            names.append(stmt.targets[0].id)
    return names


def check_layer_built_for_other_size(ctx: Ctx) -> list[Candidate]:
    failed = failed_op(ctx)
    if failed is None or not failed.inputs or failed.module is None:
        return []
    kind = failed.module_kind or ""
    layer = next((s for s in LAYERS if kind in s.kinds), None)
    m = layer.message.search(ctx.message) if layer is not None else None
    if layer is None or m is None:
        return []
    built, got = (int(m.group(1)), int(m.group(2))) if layer.built_first else (
        int(m.group(2)), int(m.group(1)))
    given = failed.inputs[0]
    shape = given.shape
    if not shape or len(shape) <= max(layer.dim, -layer.dim - 1) or shape[layer.dim] != got:
        return []
    others = shape[:layer.dim] + (shape[layer.dim + 1:] if layer.dim != -1 else [])
    if built in others:
        return []  # the size it was built for is there, in another dimension: a layout
    origin = Lineage(given).origin(layer.dim, got)
    call = _constructor(ctx, failed.module, kind)
    arg = _int_arg(call, 0, layer.keyword) if call is not None else None
    if origin is None or call is None or arg is None:
        return []
    line = arg.lineno
    name = module_label(failed.module)
    fixes = []
    for new in [*_names_holding(ctx, call, got)[:1], str(got)]:
        if new == text(arg):
            continue
        edit = replace_node(ctx.code, arg, new)
        if edit is not None:
            built_as = text(call).replace(text(arg), new, 1)
            fixes.append(Fix((edit,), runs_clean, T(
                f"build `{name}` for the {got} features its input has on line {line}: "
                f"`{built_as}`", f"在第 {line} 行按输入实际的 {got} 个特征构建 `{name}`："
                f"`{built_as}`")))
    where = origin.link.layer or origin.link.module
    fill: dict[str, object] = {
        "line": line, "module": name, "numel": built, "count": got, "dim": layer.dim,
        "name": _said(given.name), "shape": shape_text(shape), "fail_line": failed.line,
        "expr": text(arg), "detail": layer.keyword}
    steps: list[tuple[str, dict[str, object]]] = [
        ("size-from", {"name": _said(given.name), "shape": shape_text(shape), "count": got,
                       "line": origin.line, "op": origin.op,
                       "module": module_label(where) if where else None}),
        ("layer-sized", fill)]
    return [Candidate("layer-built-for-other-size", line, 0.8, steps, fixes, fill,
                      pinned=True)]


PADDING_MASK = re.compile(r"Expected key_padded_mask\.shape\[0\] to be (\d+), but got (\d+)")
ATTENTION = frozenset({"MultiheadAttention"})


def check_attention_reads_sequence_first(ctx: Ctx) -> list[Candidate]:
    """An attention layer built without ``batch_first=True`` reads (sequence, batch,
    features), and was given (batch, sequence, features): the padding mask, (batch,
    sequence), then has the batch where the layer expects its batch to be the sequence's
    length. ``batch_first=True`` is tried where the layer is built."""
    failed = failed_op(ctx)
    m = PADDING_MASK.search(ctx.message)
    if m is None or failed is None or failed.module is None or not failed.inputs or \
            failed.module_kind not in ATTENTION or failed.config.get("batch_first") is True:
        return []
    read_as_batch, batch = int(m.group(1)), int(m.group(2))
    shape = failed.inputs[0].shape
    if len(shape) != 3 or shape[:2] != [batch, read_as_batch]:
        return []
    call = _constructor(ctx, failed.module, failed.module_kind or "")
    if call is None or call.lineno != call.end_lineno:
        return []
    keywords = [k for k in call.keywords if k.arg != "batch_first"]
    new = ast.unparse(ast.Call(call.func, call.args, [
        *keywords, ast.keyword("batch_first", ast.Constant(True))]))
    edit = replace_node(ctx.code, call, new)
    name = module_label(failed.module)
    fill: dict[str, object] = {"line": call.lineno, "module": name, "fail_line": failed.line,
                               "shape": shape_text(shape), "count": batch,
                               "numel": read_as_batch, "expr": new}
    fixes = [Fix((edit,), runs_clean, T(
        f"build `{name}` batch first on line {call.lineno}: `{new}`",
        f"第 {call.lineno} 行按批次维在前构建 `{name}`：`{new}`"))] if edit is not None else []
    return [Candidate("attention-batch-first", call.lineno, 0.85,
                      [("attention-sequence-first", fill)], fixes, fill, pinned=True)]


EXCEPTION_CHECKS: tuple[Check, ...] = (check_layer_built_for_other_size,
                                       check_attention_reads_sequence_first)
SILENT_CHECKS: tuple[Check, ...] = ()

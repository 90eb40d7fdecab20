"""A normalising, attention or recurrent layer built for one size and given another: the
size written where the layer is built is the one to change, where the input's size comes from
an earlier layer of the program (its lineage says which) and the built size is nowhere else
in the input (then the input's dimensions are in another order, a layout question).

The layers and the dimension each reads (torch checks it in the layer and names both sizes):
``LayerNorm`` the last, ``MultiheadAttention`` the embedding (the last), a recurrent layer
its hidden state's last (its input's size is
:func:`tutor.diagnosis.shape_checks._rnn_size`'s; a BatchNorm's width is the catalog's
``batchnorm-width``). The change tried writes the program's own name for the size the
input has where there is one (a parameter every call passes it to, a default, a constant of
the module), else the number; where the layer's size is a name computed earlier, the chain
shows that computation.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import Fix, replace_node
from tutor.diagnosis.flow import default_value, module_label, text
from tutor.diagnosis.lineage import Lineage, shape_text
from tutor.diagnosis.operand_checks import _int_arg, failed_op
from tutor.diagnosis.shape_checks import _constructor, _said
from tutor.diagnosis.verify import runs_clean
from tutor.i18n import T
from tutor.sandbox.models import FailedOpEvidence


@dataclass(frozen=True)
class Sized:
    """How one kind of layer reports a size mismatch (the message's groups ``built`` and
    ``got``), which of its inputs and which dimension it reads, and where the size is
    written when it is built."""

    kinds: frozenset[str]
    message: re.Pattern[str]
    dim: int
    keyword: str
    position: int = 0
    """The constructor's argument that holds the size: its position and its keyword."""
    operand: int = 0
    """The input the size is read from (1: a recurrent layer's hidden state)."""
    cid: str = "layer-built-for-other-size"


RECURRENT = frozenset({"GRU", "RNN", "LSTM"})
LAYERS = (
    Sized(frozenset({"LayerNorm"}), re.compile(
        r"Given normalized_shape=\[(?P<built>\d+)\], expected input with shape \[\*, \d+\], "
        r"but got input of size\s*\[[\d, ]*?(?P<got>\d+)\]"), -1, "normalized_shape"),
    Sized(frozenset({"MultiheadAttention"}), re.compile(
        r"was expecting embedding dimension of (?P<built>\d+), but got (?P<got>\d+)"), -1,
        "embed_dim"),
    # the layers and batch agree, the state's size does not: a hidden state made by another
    # layer (an encoder) or a hidden size computed wrong where the layer is built
    Sized(RECURRENT, re.compile(
        r"Expected hidden(?:\[0\])? size \((?P<lead>\d+, \d+), (?P<built>\d+)\), got "
        r"\[(?P=lead), (?P<got>\d+)\]"), -1, "hidden_size", position=1, operand=1,
          cid="rnn-hidden-size"),
    # a recurrent cell built for one input size and given another (an attention decoder's
    # embedding joined with an encoder's context)
    Sized(frozenset({"GRUCell", "LSTMCell", "RNNCell"}), re.compile(
        r"input has inconsistent input_size: got (?P<got>\d+) expected (?P<built>\d+)"), -1,
        "input_size"),
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
        graph = ctx.flow.call_graph
        calls = ctx.flow.calls_of(function)
        args = function.args
        for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
            if graph.parameter(function, arg.arg) is None:
                continue  # `self`
            passed = [given for _, given in ctx.flow.arguments_for(function, arg.arg)]
            # every call passes the size, or leaves the parameter at a default that is it
            defaulted = len(passed) < len(calls) or not calls
            if all(_given(v, size) for v in passed) and (passed or defaulted) and (
                    not defaulted or _given(default_value(function, arg), size)):
                names.append(arg.arg)
    for stmt in ctx.flow.tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(
                stmt.targets[0], ast.Name) and _given(stmt.value, size):
            names.append(stmt.targets[0].id)
    return names


def _sum_swapped(ctx: Ctx, call: ast.Call, arg: ast.expr, built: int, got: int) -> list[str]:
    """A size written as a sum of names (``embed_size + dec_hidden_size``) where another of
    the program's names in place of one term gives the size the input has (``embed_size +
    enc_hidden_size``): the term that was meant."""
    if not (isinstance(arg, ast.BinOp) and isinstance(arg.op, ast.Add)):
        return []
    out = []
    for term, other in ((arg.left, arg.right), (arg.right, arg.left)):
        value = ctx.flow.number_of(term, call.lineno)
        if not isinstance(term, (ast.Name, ast.Attribute)) or value is None or not isinstance(
                value.value, int):
            continue
        wanted = got - (built - value.value)
        for name in _names_holding(ctx, call, wanted)[:1]:
            if name != text(term):
                out.append(text(arg).replace(text(term), name, 1) if term is arg.left
                           else f"{text(other)} + {name}")
    return out[:1]


def _with_argument(call: ast.Call, arg: ast.expr, new: str) -> str:
    """The constructor's source with ``new`` in place of ``arg``."""
    source = text(call)
    if call.lineno != arg.lineno or call.end_lineno != call.lineno:
        return source
    start = arg.col_offset - call.col_offset
    return source[:start] + new + source[start + len(text(arg)):]


def _assigned_size(ctx: Ctx, call: ast.Call, arg: ast.expr) -> ast.Assign | None:
    """The one assignment, earlier in the constructor's function, of the name or attribute
    the layer is built with, where it computes the size (not a plain copy of a number)."""
    if not isinstance(arg, (ast.Name, ast.Attribute)):
        return None
    scope = ctx.flow.scope_of(call)
    found = [s for s in ctx.flow.assignments.get(text(arg), []) if isinstance(s, ast.Assign)
             and ctx.flow.scope_of(s) is scope and s.lineno < call.lineno]
    if len(found) != 1 or isinstance(found[0].value, (ast.Constant, ast.Name)):
        return None
    return found[0]


def _channels_first(ctx: Ctx, failed: FailedOpEvidence, shape: list[int], built: int
                    ) -> list[Candidate]:
    """A LayerNorm built for the channels of feature maps (N, C, H, W) or a sequence's
    channels (N, C, L): it normalises the last dimension, so the channels go last for it and
    come back after (``movedim``), the layout the rest of the model reads."""
    if len(shape) < 3 or shape[1] != built or failed.module is None:
        return []
    line, stmt = ctx.failing_statement()
    attr = failed.module.split(".")[-1]
    call = next((n for n in ast.walk(stmt) if isinstance(n, ast.Call) and len(n.args) == 1
                 and not n.keywords and text(n.func).split(".")[-1] == attr), None) \
        if stmt is not None else None
    if call is None:
        return []
    new = f"{text(call.func)}({text(call.args[0])}.movedim(1, -1)).movedim(-1, 1)"
    edit = replace_node(ctx.code, call, new)
    name = module_label(failed.module)
    fill: dict[str, object] = {"line": line, "module": name, "numel": built,
                               "shape": shape_text(shape), "expr": new}
    fixes = [Fix((edit,), runs_clean, T(
        f"on line {line} give `{name}` the channels last and put them back after: `{new}`",
        f"第 {line} 行把通道维移到最后交给 `{name}`，之后再移回来：`{new}`"))] \
        if edit is not None else []
    return [Candidate("layernorm-channels-first", line, 0.85, [("norm-reads-last", fill)],
                      fixes, fill, pinned=True)]


def check_layer_built_for_other_size(ctx: Ctx) -> list[Candidate]:
    failed = failed_op(ctx)
    if failed is None or not failed.inputs or failed.module is None:
        return []
    kind = failed.module_kind or ""
    layer = next((s for s in LAYERS if kind in s.kinds), None)
    m = layer.message.search(ctx.message) if layer is not None else None
    if layer is None or m is None:
        return []
    built, got = int(m.group("built")), int(m.group("got"))
    if len(failed.inputs) <= layer.operand:
        return []
    given = failed.inputs[layer.operand]
    shape = given.shape
    if not shape or len(shape) <= max(layer.dim, -layer.dim - 1) or shape[layer.dim] != got:
        return []
    others = shape[:layer.dim] + (shape[layer.dim + 1:] if layer.dim != -1 else [])
    if built in others and built != 1:
        # the size it was built for is there, in another dimension: a layout
        return _channels_first(ctx, failed, shape, built) if "LayerNorm" in layer.kinds \
            else []
    origin = Lineage(given).origin(layer.dim, got)
    call = _constructor(ctx, failed.module, kind)
    arg = _int_arg(call, layer.position, layer.keyword) if call is not None else None
    if origin is None or call is None or arg is None:
        return []
    line = arg.lineno
    name = module_label(failed.module)
    fixes = []
    for new in [*_names_holding(ctx, call, got)[:1], *_sum_swapped(ctx, call, arg, built, got),
                str(got)]:
        if new == text(arg):
            continue
        edit = replace_node(ctx.code, arg, new)
        if edit is not None:
            built_as = _with_argument(call, arg, new)
            fixes.append(Fix((edit,), runs_clean, T(
                f"build `{name}` for the size it is given ({got}) on line {line}: "
                f"`{built_as}`", f"在第 {line} 行按实际得到的大小（{got}）构建 `{name}`："
                f"`{built_as}`")))
    where = origin.link.layer or origin.link.module
    fill: dict[str, object] = {
        "line": line, "module": name, "numel": built, "count": got, "dim": layer.dim,
        "name": _said(given.name), "shape": shape_text(shape), "fail_line": failed.line,
        "expr": text(arg), "detail": layer.keyword}
    assigned = _assigned_size(ctx, call, arg)
    if assigned is not None:
        # the size is a name computed earlier in the same function: the chain shows how
        fill["before_line"], fill["value"] = assigned.lineno, text(assigned.value)
    steps: list[tuple[str, dict[str, object]]] = [
        ("size-from", {"name": _said(given.name), "shape": shape_text(shape), "count": got,
                       "line": origin.line, "op": origin.op,
                       "module": module_label(where) if where else None}),
        ("layer-sized", fill)]
    if assigned is not None:
        steps.append(("size-assigned", fill))
    return [Candidate(layer.cid, line, 0.8, steps, fixes, fill, pinned=True)]


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

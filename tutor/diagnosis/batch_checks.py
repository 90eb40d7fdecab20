"""A model that mixes the samples of its batch: its output for one sample depends on the
others (:mod:`tutor.sandbox.batch_probe` gave the last batch again, whole and then half). The
changes tried: on the line where the samples are mixed, the operation's dimension taken off
the batch (``dim=0`` to ``dim=1`` or ``dim=-1``); and a recurrent or attention layer called
up to that line, built without ``batch_first=True``, built with it (it reads a batch-first
input's batch as time, or as tokens to attend over). A change is shown when the probe of the
fixed program finds the samples independent."""

from __future__ import annotations

import ast
import re

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import Edit, Fix, replace_in_line
from tutor.diagnosis.flow import call_name, text
from tutor.i18n import T, Text
from tutor.sandbox.models import RunResult

BATCH_DIM = r"\bdim\s*=\s*0\b"
SEQUENCE_FIRST = frozenset({"LSTM", "GRU", "RNN", "MultiheadAttention", "Transformer",
                            "TransformerEncoderLayer", "TransformerDecoderLayer"})
"""Layers that read (sequence, batch, features) unless built with ``batch_first=True``."""


def samples_independent(original: RunResult, fixed: RunResult) -> Text | None:
    if fixed.outcome != "ok" or fixed.evidence is None or fixed.evidence.batch_mixing:
        return None
    return T("with this change the model gives each sample the same output whatever the "
             "other samples of its batch are",
             "改动后，无论同一批次里的其他样本是什么，模型对每个样本给出的输出都不变")


def check_samples_mixed(ctx: Ctx) -> list[Candidate]:
    if ctx.error is not None:
        return []
    out = []
    for mixed in ctx.evidence.batch_mixing:
        if mixed.line is None or mixed.op is None:
            continue
        fixes = []
        for dim in ("1", "-1"):
            edit = replace_in_line(ctx.code, mixed.line, BATCH_DIM, f"dim={dim}")
            if edit is not None:
                fixes.append(Fix((edit,), samples_independent, T(
                    f"take `{mixed.op}` on line {mixed.line} over dimension {dim}, within each "
                    "sample: `dim=" + dim + "`",
                    f"让第 {mixed.line} 行的 `{mixed.op}` 沿第 {dim} 维、在每个样本内部计算："
                    "`dim=" + dim + "`")))
        fill = {"line": mixed.line, "module": mixed.module, "op": mixed.op,
                "count": mixed.batch}
        layer = _sequence_first_layer(ctx, mixed.line)
        if layer is not None and not _time_first(ctx, mixed.batch):
            # the layer that reads the batch as time is the root
            name, built, fix = layer
            made = built.end_lineno or built.lineno
            named = {**fill, "line": made, "name": name, "detail": call_name(built)}
            out.append(Candidate("batch-first-missing", made, 0.65, [
                ("batch-probe", fill), ("sequence-first-layer", named)], [fix], named))
        out.append(Candidate("samples-mixed", mixed.line, 0.6, [
            ("batch-probe", fill), ("samples-mixed-at", fill)], fixes, fill))
    return out


_TIME_NAME = re.compile(r"step|seq|len|time|window|horizon|frame|token|bptt", re.IGNORECASE)


def _time_first(ctx: Ctx, size: int) -> bool:
    """Whether the program says its dimension 0 is time, not the batch: a name of a length of
    time (``num_steps``, ``seq_len``) bound to the size the probe halved, or a transpose or
    permute in it (``X.T``, ``x.transpose(0, 1)``) that puts time first on purpose. The probe
    takes dimension 0 for the batch; a sequence-first model given time-first data mixes
    nothing, and ``batch_first=True`` would break it."""
    for node in ast.walk(ctx.flow.tree):
        pairs: list[tuple[ast.expr, ast.expr]] = []
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple) and \
                        len(target.elts) == len(node.value.elts):
                    pairs += zip(target.elts, node.value.elts, strict=True)
                else:
                    pairs.append((target, node.value))
        for target, value in pairs:
            name = target.id if isinstance(target, ast.Name) else (
                target.attr if isinstance(target, ast.Attribute) else "")
            if isinstance(value, ast.Constant) and value.value == size and \
                    _TIME_NAME.search(name):
                return True
    return any((isinstance(n, ast.Attribute) and n.attr == "T") or (
        isinstance(n, ast.Call) and call_name(n) in ("transpose", "permute", "swapaxes")
        and any(isinstance(a, ast.Constant) and a.value == 0 for a in n.args))
        for n in ast.walk(ctx.flow.tree))


def _sequence_first_layer(ctx: Ctx, line: int) -> tuple[str, ast.Call, Fix] | None:
    """The last sequence-first layer called up to ``line`` in the code around it (the probe
    names the first op whose output differs, often the one after the layer's fused kernel),
    built without ``batch_first=True``: its name, its constructor and the change that builds
    it with the flag."""
    flow = ctx.flow
    around = flow.function_at(line)
    called = [c for c in flow.calls if c.lineno <= line and flow.function_at(c.lineno) is around
              and isinstance(c.func, (ast.Name, ast.Attribute))]
    for call in reversed(called):
        built = flow.constructor(text(call.func))
        if built is None or call_name(built) not in SEQUENCE_FIRST or any(
                k.arg == "batch_first" and not (isinstance(k.value, ast.Constant)
                                                and k.value.value is False)
                for k in built.keywords):
            continue
        edit = _with_batch_first(ctx.code, built)
        if edit is None:
            return None
        layer, made = text(call.func), built.end_lineno or built.lineno
        return layer, built, Fix((edit,), samples_independent, T(
            f"build `{layer}` with `batch_first=True` on line {made}",
            f"在第 {made} 行构建 `{layer}` 时加上 `batch_first=True`"))
    return None


def _with_batch_first(code: str, built: ast.Call) -> Edit | None:
    """The constructor's last line with ``batch_first=True`` among its arguments (in place of
    a ``batch_first=False``)."""
    lines = code.splitlines()
    end, stop = built.end_lineno, built.end_col_offset
    if end is None or stop is None or not 1 <= end <= len(lines):
        return None
    flag = next((k for k in built.keywords if k.arg == "batch_first"), None)
    if flag is not None:
        if flag.value.lineno != flag.value.end_lineno:
            return None
        row = lines[flag.value.lineno - 1]
        new = row[:flag.value.col_offset] + "True" + row[flag.value.end_col_offset or 0:]
        return Edit("replace", flag.value.lineno, new)
    row = lines[end - 1]
    head = row[:stop - 1].rstrip()
    sep = "" if head.endswith("(") else " " if head.endswith(",") else ", "
    return Edit("replace", end, f"{head}{sep}batch_first=True{row[stop - 1:]}")


EXCEPTION_CHECKS: tuple[Check, ...] = ()
SILENT_CHECKS: tuple[Check, ...] = (check_samples_mixed,)

"""A loss that raised because its arguments' shapes do not fit together, whatever the words
of its message: every loss of ``torch.nn.functional`` (and each ``nn.*Loss`` module, which
calls one) says it its own way ("Target size must be the same as input size", "All input
tensors should have same dimension", "size mismatch (got input: ..., target: ...)"), and
the catalog knows only some of those words.

The re-run saw the loss's operands (:attr:`Evidence.failed`): their shapes and the line that
made each. The changes tried are the ones those shapes allow, each on the loss's call, and
the one shown is the one with which the program ran to the end: a target of one value
expanded to the prediction's shape, a target that differs from the prediction only by
dimensions of size 1 viewed as it, a target's dimension of size 1 dropped, a prediction
whose height and width are the label map's divided by one whole factor resized to them (a
segmentation head that was never upsampled)."""

from __future__ import annotations

import ast
import math
import re

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import Fix, node_fix, postfix
from tutor.diagnosis.flow import call_name, text
from tutor.diagnosis.lineage import shape_text
from tutor.diagnosis.verify import runs_clean
from tutor.i18n import T
from tutor.sandbox.models import OperandEvidence

_SIZES_RE = re.compile(r"\b(sizes?|shapes?|dimensions?|dims?|\dD)\b", re.IGNORECASE)
_LOSSES = frozenset({"cross_entropy", "binary_cross_entropy", "binary_cross_entropy_with_logits",
                     "kl_div"})
"""The losses whose names do not end in ``_loss``."""


def is_loss(op: str) -> bool:
    """Whether the op that raised is one of the losses (``margin_ranking_loss``, ...)."""
    return op in _LOSSES or op.endswith("_loss")


def _squeezed(shape: list[int]) -> list[int]:
    return [n for n in shape if n != 1]


def _operand(call: ast.Call, given: OperandEvidence) -> ast.expr | None:
    """The argument of ``call`` that is ``given``: by the learner's expression where the run
    named it, else by its position or keyword."""
    if given.name:
        return next((a for a in [*call.args, *(k.value for k in call.keywords)]
                     if text(a) == given.name), None)
    if given.arg.isdigit():
        index = int(given.arg)
        return call.args[index] if index < len(call.args) else None
    return next((k.value for k in call.keywords if k.arg == given.arg), None)


def _loss_call(ctx: Ctx, line: int, op: str, given: list[OperandEvidence]
               ) -> ast.Call | None:
    """The call on ``line`` that passes the loss's operands (the loss itself, or the
    criterion module that calls it): the one named as the op first."""
    stmt = ctx.flow.statement_at(line)
    if stmt is None:
        return None
    calls = [node for node in ast.walk(stmt) if isinstance(node, ast.Call)
             and all(_operand(node, g) is not None for g in given)]
    return next((c for c in calls if call_name(c) == op), calls[0] if calls else None)


def check_loss_shapes(ctx: Ctx) -> list[Candidate]:
    failed = ctx.evidence.failed
    if ctx.error is None or failed is None or not is_loss(failed.op) or \
            not _SIZES_RE.search(ctx.message):
        return []
    given = [g for g in failed.inputs if g.shape]
    if len(given) < 2:
        return []
    prediction, target = given[0], given[-1]
    if prediction.shape == target.shape:
        return []
    call = _loss_call(ctx, failed.line, failed.op, [prediction, target])
    if call is None:
        return []
    pred_node, target_node = _operand(call, prediction), _operand(call, target)
    if pred_node is None or target_node is None:
        return []
    prediction = prediction.model_copy(update={"name": text(pred_node)})
    target = target.model_copy(update={"name": text(target_node)})
    out = []
    target_fixes = _target_fixes(ctx, failed.line, target, target_node, prediction)
    if target_fixes:
        out.append(_candidate(ctx, failed.line, failed.op, target, prediction, target_fixes))
    pred_fixes = _prediction_fixes(ctx, failed.line, prediction, pred_node, target,
                                   target_node)
    if pred_fixes:
        out.append(_candidate(ctx, failed.line, failed.op, prediction, target, pred_fixes))
    return out


def _candidate(ctx: Ctx, fail_line: int, op: str, changed: OperandEvidence,
               other: OperandEvidence, fixes: list[Fix]) -> Candidate:
    made = changed.line if changed.line and ctx.flow.statement_at(changed.line) else fail_line
    fill: dict[str, object] = {
        "line": made, "fail_line": fail_line, "op": op, "name": changed.name or "",
        "shape": shape_text(changed.shape), "given": other.name or "",
        "target_shape": shape_text(other.shape)}
    # below the message's own entry's changes (0.5): where both work, the entry that knows
    # the message says it in its words; this one speaks where no entry does, or none worked
    return Candidate("loss-argument-shapes", made, 0.45, [("loss-operand-shapes", fill)],
                     fixes, fill)


def _target_fixes(ctx: Ctx, line: int, target: OperandEvidence, node: ast.expr,
                  prediction: OperandEvidence) -> list[Fix]:
    name, pred = target.name or "", prediction.name or ""
    p, t = prediction.shape, target.shape
    changes: list[tuple[str, str, str]] = []  # (what is appended, why in English, in Chinese)
    # one value for all (a ranking's +1): expanding a target of several values along a
    # size-1 dimension would hide a prediction with too many channels or classes
    if math.prod(t) == 1 < math.prod(p):
        changes.append((f".expand_as({pred})", f"give the loss `{name}` with the shape of "
                        f"`{pred}`", f"把形状与 `{pred}` 相同的 `{name}` 交给损失函数"))
    missing = [d for d in range(len(p)) if len(p) == len(t) + 1 and p[d] == 1
               and p[:d] + p[d + 1:] == t]
    if missing:  # the prediction's channel of one the target lacks: give the target it
        changes.append((f".unsqueeze({missing[-1]})", f"give `{name}` the dimension of size 1 "
                        f"that `{pred}` has at {missing[-1]}",
                        f"给 `{name}` 加上 `{pred}` 在第 {missing[-1]} 维的大小为 1 的维度"))
    elif math.prod(t) == math.prod(p) and _squeezed(t) == _squeezed(p):
        changes.append((f".view_as({pred})", f"give the loss `{name}` with the shape of `{pred}` "
                        "(they differ only by dimensions of size 1)",
                        f"把形状与 `{pred}` 相同的 `{name}` 交给损失函数"
                        "（两者只差大小为 1 的维度）"))
    ones = [d for d, n in enumerate(t) if n == 1]
    if ones and len(t) > 1:
        dim = ones[-1] - len(t)  # counted from the end: the batch may be absent
        changes.append((f".squeeze({dim})", f"drop `{name}`'s dimension of size 1 before the "
                        "loss", f"在计算损失之前去掉 `{name}` 大小为 1 的维度"))
    fixes = []
    for suffix, en, zh in changes:
        new = postfix(node, suffix)
        fixes.append(node_fix(ctx.code, node, new, runs_clean, T(
            f"{en}: `{new}` on line {line}", f"{zh}：第 {line} 行写成 `{new}`")))
    return [f for f in fixes if f is not None]


def _prediction_fixes(ctx: Ctx, line: int, prediction: OperandEvidence, node: ast.expr,
                      target: OperandEvidence, target_node: ast.expr) -> list[Fix]:
    """A map of scores (N, C, H, W) whose height and width are not the labels' (N, H', W')
    or the target map's (N, C', H', W'): resized to them, as a segmentation head is
    upsampled to the label map."""
    p, t = prediction.shape, target.shape
    if len(p) != 4 or len(t) not in (3, 4) or p[0] != t[0] or p[-2:] == t[-2:] or \
            "torch" not in ctx.flow.imported:
        return []
    # a head that was never upsampled is smaller by its stride, the same whole factor in
    # height and width; sizes a few pixels apart were lost to rounding (an image whose size
    # is no multiple of a scale), and resizing the prediction would hide that
    factors = {t[-2] / p[-2], t[-1] / p[-1]}
    if len(factors) != 1 or not all(f >= 2 and f == int(f) for f in factors):
        return []
    name, labels = prediction.name or "", target.name or ""
    size = postfix(target_node, ".shape[-2:]")
    new = (f"torch.nn.functional.interpolate({text(node)}, size={size}, mode=\"bilinear\", "
           "align_corners=False)")
    fix = node_fix(ctx.code, node, new, runs_clean, T(
        f"resize `{name}` to the height and width of `{labels}` before the loss: `{new}` on "
        f"line {line}",
        f"在计算损失之前把 `{name}` 缩放到 `{labels}` 的高和宽：第 {line} 行写成 `{new}`"))
    return [fix] if fix is not None else []


EXCEPTION_CHECKS: tuple[Check, ...] = (check_loss_shapes,)
SILENT_CHECKS: tuple[Check, ...] = ()

"""Silent bugs of what a loss compares: the prediction and its target, as the instrumented
re-run saw them (:mod:`tutor.sandbox.training_trace`: every regression loss, and every
``target - model(x)`` written by hand, with the op that made the prediction and the target's
values):

- an output activation whose range excludes the targets (a ReLU for targets below zero, a
  sigmoid for targets up to 100): the predictions can never reach those targets, and at the
  activation's bound the gradient is zero;
- targets cast to an integer dtype that cut off their fractions (0.7 becomes 0);
- targets orders of magnitude larger than what the network outputs, so the loss cannot fall
  at any sensible rate: normalised, it falls.

Each fix is tried; it counts only when the fixed run no longer shows the mismatch (and, where
the program trains, the loss ends lower).
"""

from __future__ import annotations

import ast

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import Edit, Expect, Fix, losses, replace_node
from tutor.diagnosis.flow import call_name, receiver, text
from tutor.diagnosis.symptoms import traced
from tutor.diagnosis.trace_checks import LAYER_KINDS, _layer_out
from tutor.diagnosis.training_checks import _drop_activation
from tutor.diagnosis.verify import loss_improves
from tutor.i18n import T, Text
from tutor.sandbox.models import Evidence, LossInputEvidence, RunResult

BOUNDED = {"relu": ("ReLU", "0", None), "relu_": ("ReLU", "0", None),
           "relu6": ("ReLU6", "0", "6"), "sigmoid": ("Sigmoid", "0", "1"),
           "sigmoid_": ("Sigmoid", "0", "1"), "softmax": ("Softmax", "0", "1"),
           "_softmax": ("Softmax", "0", "1"), "tanh": ("Tanh", "-1", "1"),
           "tanh_": ("Tanh", "-1", "1"), "hardtanh": ("Hardtanh", "-1", "1"),
           "softplus": ("Softplus", "0", None), "hardsigmoid": ("Hardsigmoid", "0", "1")}
"""Activations with a bounded range: the layer's class and the bounds, as written."""
UNREACHABLE = 0.05
"""The share of targets an output activation cannot produce for the mismatch to count."""


def _range(op: str) -> Text:
    _, low, high = BOUNDED[op]
    return T(f"{low} or more", f"不小于 {low}") if high is None else T(
        f"between {low} and {high}", f"在 {low} 到 {high} 之间")


# -- an output activation that cannot reach the targets ------------------------------------------
def check_output_range(ctx: Ctx) -> list[Candidate]:
    """The prediction a trained loss compares comes out of a bounded activation, and part of
    its targets lies outside that activation's range: take the activation off the output."""
    if ctx.error is not None:
        return []
    out: list[Candidate] = []
    seen: set[int] = set()
    for given in ctx.evidence.training.loss_inputs:
        op = given.producer or ""
        if op not in BOUNDED or not given.backward or (given.outside or 0) < UNREACHABLE or \
                given.target_low is None or given.target_high is None:
            continue
        for root, edit in _activation_out(ctx, given):
            if root in seen:
                continue
            seen.add(root)
            cid = "relu-output" if BOUNDED[op][0] == "ReLU" else "output-range"
            facts = {"line": root, "op": BOUNDED[op][0], "detail": _range(op),
                     "low": f"{given.target_low:.4g}", "high": f"{given.target_high:.4g}",
                     "count": f"{given.outside:.0%}" if given.outside else None,
                     "fail_line": given.line}
            out.append(Candidate(cid, root, 0.9, [("output-bounded", facts)], [Fix(
                (edit,), _reaches_targets(given.loss), T(
                    f"let the output take any value: remove the {BOUNDED[op][0]} on line {root}",
                    f"让输出可以取任意值：去掉第 {root} 行的 {BOUNDED[op][0]}"))], facts))
    return out


def _activation_out(ctx: Ctx, given: LossInputEvidence) -> list[tuple[int, Edit]]:
    """Where the activation comes off: its layer out of the Sequential, its layer's call in
    forward, or the functional call on the line that ran it."""
    flow = ctx.flow
    found: list[tuple[int, Edit]] = []
    kind = given.producer_kind
    if given.producer_module and kind is not None and (kind in LAYER_KINDS or kind in {
            b[0] for b in BOUNDED.values()}):
        layer = flow.constructor(given.producer_module, kind)
        parent = flow.parents.get(layer) if layer is not None else None
        if layer is not None and isinstance(parent, ast.Call) and call_name(
                parent) == "Sequential":
            edit = _layer_out(ctx, layer, parent, False)
            if edit is not None:
                found.append((layer.lineno, edit))
            return found
        last = given.producer_module.split(".")[-1]
        calls = [c for c in flow.calls if c.lineno == given.producer_line
                 and text(c.func).split(".")[-1] == last and c.args]
        if calls:
            edit = replace_node(ctx.code, calls[0], text(calls[0].args[0]))
            if edit is not None:
                found.append((edit.line, edit))
        return found
    if given.producer_line is None:
        return found
    names = {given.producer or "", (given.producer or "").strip("_")}
    for call in flow.calls:
        if call.lineno == given.producer_line and call_name(call) in names:
            edit = _drop_activation(ctx, call)
            if edit is not None:
                found.append((call.lineno, edit))
            break
    return found


def _reaches_targets(loss: str) -> Expect:
    """The fixed run's prediction for that loss is no longer bounded away from its targets,
    and the loss ends lower than it did."""
    def expect(original: RunResult, fixed: RunResult) -> Text | None:
        if fixed.outcome != "ok" or fixed.evidence is None:
            return None
        given = [g for g in fixed.evidence.training.loss_inputs if g.loss == loss]
        if not given or any((g.outside or 0) >= UNREACHABLE for g in given):
            return None
        before, after = losses(original), losses(fixed)
        if len(after) >= 2 and len(before) >= 2 and not after[-1] < before[-1]:
            return None
        shown = T("with this change the output can take the targets' values",
                  "改动后输出可以取到目标的数值")
        if len(after) >= 2 and len(before) >= 2:
            return T(f"{shown.en}, and the loss ends at {after[-1]:.4g} (before the change: "
                     f"{before[-1]:.4g})",
                     f"{shown.zh}，损失最后是 {after[-1]:.4g}（改动前：{before[-1]:.4g}）")
        return shown
    return expect


# -- targets cut to whole numbers ------------------------------------------------------------------
INTEGER_CASTS = ("long", "int", "short")


def check_target_cast(ctx: Ctx) -> list[Candidate]:
    """A loss that compares values gets targets an integer cast truncated (scores in
    [0, 1) all become 0): cast to a floating dtype instead."""
    if ctx.error is not None:
        return []
    out: list[Candidate] = []
    for given in ctx.evidence.training.loss_inputs:
        if given.target_cast is None or given.target_cast_line is None:
            continue
        line = given.target_cast_line
        for call in ctx.flow.calls:
            if call.lineno != line or not _integer_cast(call):
                continue
            assert isinstance(call.func, ast.Attribute)
            new = f"{text(call.func.value)}.float()"
            edit = replace_node(ctx.code, call, new)
            if edit is None:
                continue
            facts = {"line": line, "op": text(call), "fail_line": given.line,
                     "low": _shown(given.target_low), "high": _shown(given.target_high)}
            out.append(Candidate("target-cast-to-long", line, 0.9, [("target-truncated", facts)],
                                 [Fix((edit,), _targets_kept, T(
                                     f"keep the targets' fractions: `{new}` on line {line}",
                                     f"第 {line} 行保留目标的小数部分：`{new}`"))], facts))
            break
    return out


def _shown(value: float | None) -> str | None:
    return f"{value:.4g}" if value is not None else None


def _integer_cast(call: ast.Call) -> bool:
    name = call_name(call)
    if name in INTEGER_CASTS and not call.args and receiver(call) not in (None, "torch"):
        return True
    if name in ("to", "type") and isinstance(call.func, ast.Attribute) and call.args:
        written = text(call.args[0])
        return any(w in written for w in ("long", "int64", "int32", "LongTensor", "IntTensor"))
    return False


def _targets_cut(ev: Evidence) -> bool:
    return any(g.target_cast for g in ev.training.loss_inputs)


def _kept(original: Evidence, fixed: Evidence) -> Text | None:
    if _targets_cut(fixed) or not any(g.target_low is not None for g in fixed.training
                                      .loss_inputs):
        return None
    return T("with this change the loss compares the predictions with the real targets, "
             "fractions included", "改动后损失把预测与真实的目标（包括小数部分）比较")


_targets_kept = traced(_kept)


# -- targets far larger than the outputs ---------------------------------------------------------
LARGE = 1e3
"""Targets this large (in absolute value) are out of reach of a freshly initialised network."""


def check_unnormalized_target(ctx: Ctx) -> list[Candidate]:
    """The targets of a trained regression are orders of magnitude larger than the network's
    outputs, and the loss barely falls: standardise them (and a large input with them)."""
    ev = ctx.evidence
    ls = losses(ctx.result)
    if ctx.error is not None or not ev.steps or len(ls) < 3 or ls[-1] < ls[0] * 0.5:
        return []
    out: list[Candidate] = []
    for given in ev.training.loss_inputs:
        if not given.backward or given.target_low is None or given.target_high is None or \
                given.scale is None:
            continue
        size = max(abs(given.target_low), abs(given.target_high))
        if size < LARGE or size < 100 * (given.scale + 1):
            continue
        target = _loss_target(ctx, given.line)
        if target is None:
            continue
        stmt = ctx.flow.assigned_before(target, given.line)
        if stmt is None or ctx.flow.scope_of(stmt) is not ctx.flow.scope_of(
                ctx.flow.statement_at(given.line) or stmt):
            continue
        end = stmt.end_lineno or stmt.lineno
        norm = f"{target} = ({target} - {target}.mean()) / {target}.std()"
        edits = [Edit("insert_after", end, norm)]
        facts = {"line": stmt.lineno, "name": target, "low": f"{given.target_low:.4g}",
                 "high": f"{given.target_high:.4g}", "detail": f"{given.scale:.4g}",
                 "loss_first": f"{ls[0]:.4g}", "loss_last": f"{ls[-1]:.4g}"}
        out.append(Candidate("unnormalized-target", stmt.lineno, 0.8, [
            ("target-scale", facts), ("loss-stays", facts)], [Fix(tuple(edits), loss_improves,
                T(f"standardise `{target}` after line {end}: `{norm}` (to read a prediction "
                  "in the old units, multiply it by the old standard deviation and add the old "
                  "mean)",
                  f"在第 {end} 行之后把 `{target}` 标准化：`{norm}`（要得到原来单位的预测值，"
                  "先乘以原来的标准差，再加上原来的均值）"))], facts))
    return out


def _loss_target(ctx: Ctx, line: int) -> str | None:
    """The name the loss on ``line`` takes as its target: the second argument of the
    criterion's call, or the side of a difference that is not the model's output."""
    for call in ctx.flow.calls:
        if call.lineno == line and len(call.args) == 2 and isinstance(call.args[1], ast.Name):
            return call.args[1].id
    return None


EXCEPTION_CHECKS: tuple[Check, ...] = ()
SILENT_CHECKS: tuple[Check, ...] = (check_output_range, check_target_cast,
                                    check_unnormalized_target)

"""Weights kept in float16 or bfloat16 and updated by an optimizer step smaller than the
spacing of those numbers: the step's update rounds away and most weights never move, so the
model does not learn, silently. The run measures, at each step, the share of the entries a
gradient pushed that the step left unchanged; the source says where the model (and its
inputs) were cast. The change tried keeps them in float32 (mixed precision belongs in
``torch.autocast``, which keeps float32 weights)."""

from __future__ import annotations

import ast
from collections import defaultdict
from statistics import median

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import Edit, Fix, replace_nodes
from tutor.diagnosis.flow import Flow, call_name, text
from tutor.i18n import T, Text
from tutor.sandbox.models import RunResult

STALLED = 0.5
"""A step leaves at least this share of the pushed entries unchanged: its update is lost."""
LOW_NAMES = ("bfloat16", "float16", "half")
CAST_METHODS = {"half": "float", "bfloat16": "float"}
SPACING = {
    "bfloat16": T("bfloat16 keeps 8 bits of precision: next to a weight of about 0.1 the "
                  "nearest other bfloat16 number is almost a thousandth away",
                  "bfloat16 只有 8 位精度：在大约 0.1 的权重旁边，相邻的另一个 bfloat16 数"
                  "相差将近千分之一"),
    "float16": T("float16 keeps 11 bits of precision: next to a weight of about 0.1 the "
                 "nearest other float16 number is about a ten-thousandth away",
                 "float16 只有 11 位精度：在大约 0.1 的权重旁边，相邻的另一个 float16 数"
                 "相差约万分之一"),
}


def _stalled(result: RunResult) -> float | None:
    ev = result.evidence
    shares = [s.stalled for s in ev.steps if s.stalled is not None] if ev is not None else []
    return median(shares) if shares else None


def updates_land(original: RunResult, fixed: RunResult) -> Text | None:
    """The fixed run's steps change the weights their gradients push."""
    share = _stalled(fixed)
    if fixed.outcome != "ok" or fixed.evidence is None or not fixed.evidence.steps or (
            share is not None and share >= STALLED):
        return None
    before = _stalled(original) or 0.0
    return T(f"with this change each step moves the weights its gradient pushes (before: "
             f"{before:.0%} of them stayed where they were)",
             f"改动后每一步都会移动梯度推动的权重（改动前有 {before:.0%} 原地不动）")


def _casts(flow: Flow) -> list[tuple[ast.AST, str]]:
    """Where the program casts to a low-precision float, and that cast written as float32:
    ``.half()`` / ``.bfloat16()`` and a ``torch.bfloat16`` / ``torch.float16`` /
    ``torch.half`` given to ``.to``, ``.type`` or a ``dtype=``."""
    found: list[tuple[ast.AST, str]] = []
    for call in flow.calls:
        name = call_name(call)
        if name in CAST_METHODS and not call.args and isinstance(call.func, ast.Attribute):
            found.append((call, f"{text(call.func.value)}.{CAST_METHODS[name]}()"))
            continue
        given = [*call.args, *(k.value for k in call.keywords if k.arg == "dtype")]
        for arg in given:
            if isinstance(arg, ast.Attribute) and arg.attr in LOW_NAMES:
                found.append((arg, f"{text(arg.value)}.float32"))
    return found


def _casts_model(flow: Flow, node: ast.AST) -> bool:
    """The cast applies to a model: a module built right there (``nn.Sequential(...)``),
    or something whose ``.parameters()`` the program reads."""
    call = node if isinstance(node, ast.Call) else flow.parents.get(node)
    owner = call.func.value if isinstance(call, ast.Call) and isinstance(
        call.func, ast.Attribute) else None
    if owner is None:
        return False
    with_parameters = {text(c.func.value) for c in flow.calls_named("parameters")
                       if isinstance(c.func, ast.Attribute)}
    return text(owner) in with_parameters or text(owner).startswith("nn.")


def check_updates_rounded_away(ctx: Ctx) -> list[Candidate]:
    ev = ctx.evidence
    if ctx.error is not None:
        return []
    share = _stalled(ctx.result)
    low = next((s.low_precision for s in ev.steps if s.low_precision), None)
    if share is None or share < STALLED or low is None:
        return []
    casts = _casts(ctx.flow)
    if not casts:
        return []
    by_line: dict[int, list[tuple[ast.AST, str]]] = defaultdict(list)
    for node, new in casts:
        by_line[getattr(node, "lineno", 0)].append((node, new))
    edits: list[Edit] = []
    for group in by_line.values():
        edit = replace_nodes(ctx.code, group)
        if edit is None:
            return []
        edits.append(edit)
    root = next((n for n in sorted(by_line) if any(
        _casts_model(ctx.flow, node) for node, _ in by_line[n])), min(by_line))
    numbers = [str(n) for n in sorted(by_line)]
    lines = numbers[0] if len(numbers) == 1 else f"{', '.join(numbers[:-1])} and {numbers[-1]}"
    dtype = low.removeprefix("torch.")
    spacing = SPACING.get(dtype, SPACING["float16"])
    lr = next((s.lr for s in ev.steps if s.lr is not None), None)
    facts: dict[str, object] = {"line": root, "dtype": dtype, "why": spacing,
                                "count": f"{share:.0%}", "lr": f"{lr:g}" if lr else "?",
                                "optimizer": ev.steps[0].optimizer,
                                "detail": T(lines, "、".join(numbers))}
    return [Candidate("updates-rounded-away", root, 0.85, [("steps-stalled", facts)], [Fix(
        tuple(edits), updates_land, T(
            f"keep the weights (and what meets them) in float32: the casts on "
            f"line{'s' if len(numbers) > 1 else ''} {lines} made float32",
            f"让权重（以及与之相乘的输入）保持 float32：把第 {'、'.join(numbers)} 行的类型转换"
            "改为 float32"))], facts)]


EXCEPTION_CHECKS: tuple[Check, ...] = ()
SILENT_CHECKS: tuple[Check, ...] = (check_updates_rounded_away,)

"""Adam-family optimizers over float16 weights with their default ``eps=1e-8``: float16 has
nothing that small (its least positive number is about 6e-8), so ``eps`` is 0 there, and an
entry whose gradient is exactly 0 (an embedding row not in the batch, a ReLU that never
fired) is updated by 0 / (0 + 0): NaN. The run shows it: a step whose gradients were all
finite, and the next pass's gradients are not (the weights it left are NaN). The change tried
gives the optimizer an ``eps`` float16 can hold (1e-4, as mixed-precision trainers do); the
better change, float32 weights under ``autocast``, is the float16 casts' own check
(:mod:`tutor.diagnosis.precision_checks`)."""

from __future__ import annotations

import itertools

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import Fix, replace_node
from tutor.diagnosis.flow import call_name, text
from tutor.i18n import T, Text
from tutor.sandbox.models import RunResult

ADAM = frozenset({"Adam", "AdamW", "Adamax", "NAdam", "RAdam"})
EPS = "1e-4"


def stays_finite(original: RunResult, fixed: RunResult) -> Text | None:
    steps = fixed.evidence.steps if fixed.evidence is not None else []
    if fixed.outcome != "ok" or not steps or any(s.grads_nonfinite for s in steps):
        return None
    return T("with this change no step leaves a NaN in the weights",
             "改动后没有哪一步在权重里留下 NaN")


def check_adam_eps_in_float16(ctx: Ctx) -> list[Candidate]:
    if ctx.error is not None:
        return []
    steps = [s for s in ctx.evidence.steps if s.kind in ADAM
             and s.low_precision == "torch.float16"]
    turned = next((b for a, b in itertools.pairwise(steps)
                   if a.optimizer == b.optimizer and not a.grads_nonfinite
                   and b.grads_nonfinite), None)
    if turned is None:
        return []
    for _stmt, name, call in ctx.flow.optimizers():
        if call_name(call) != turned.kind or (name and name.split(".")[-1] != turned.optimizer
                                               .split(".")[-1]):
            continue
        if any(k.arg == "eps" for k in call.keywords) or len(call.args) > 3:
            return []  # an eps of its own: the words speak of the default
        new = f"{text(call)[:-1]}, eps={EPS})" if call.args or call.keywords else \
            f"{text(call)[:-1]}eps={EPS})"
        edit = replace_node(ctx.code, call, new)
        line = call.lineno
        fill: dict[str, object] = {"line": line, "optimizer": turned.optimizer,
                                   "op": turned.kind, "count": turned.grads_nonfinite}
        fixes = [Fix((edit,), stays_finite, T(
            f"give `{turned.kind}` an eps float16 can hold on line {line}: `eps={EPS}`",
            f"第 {line} 行给 `{turned.kind}` 一个 float16 能表示的 eps：`eps={EPS}`"))] \
            if edit is not None else []
        # a float16 step can turn NaN for other reasons (an overflow, a rate too high): the
        # claim is eps's only where giving it one float16 holds keeps every step finite
        return [Candidate("adam-eps-float16", line, 0.85, [("eps-underflows", fill)], fixes,
                          fill, only_if_tried=True)]
    return []


EXCEPTION_CHECKS: tuple[Check, ...] = ()
SILENT_CHECKS: tuple[Check, ...] = (check_adam_eps_in_float16,)

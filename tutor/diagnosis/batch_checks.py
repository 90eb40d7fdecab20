"""A model that mixes the samples of its batch: its output for one sample depends on the
others (:mod:`tutor.sandbox.batch_probe` gave the last batch again, whole and then half). The
change tried on the line where the samples are mixed takes the operation's dimension off the
batch (``dim=0`` to ``dim=1`` or ``dim=-1``); it is shown when the probe of the fixed program
finds the samples independent."""

from __future__ import annotations

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import Fix, replace_in_line
from tutor.i18n import T, Text
from tutor.sandbox.models import RunResult

BATCH_DIM = r"\bdim\s*=\s*0\b"


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
        out.append(Candidate("samples-mixed", mixed.line, 0.6, [
            ("batch-probe", fill), ("samples-mixed-at", fill)], fixes, fill))
    return out


EXCEPTION_CHECKS: tuple[Check, ...] = ()
SILENT_CHECKS: tuple[Check, ...] = (check_samples_mixed,)

"""A normalisation layer of one dimensionality given input of another: ``BatchNorm2d`` after
a ``Conv1d`` or a ``Linear`` ("expected 4D input (got 3D input)"), ``BatchNorm1d`` given
images ("expected 2D or 3D input (got 4D input)"). The run names the layer that refused its
input and how many dimensions that input had; the layer of the same kind built for that many
(``BatchNorm1d`` for (N, C) and (N, C, L), ``BatchNorm2d`` for (N, C, H, W), ...) with the
same arguments is tried where the program builds it."""

from __future__ import annotations

import ast
import re

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import Fix, replace_node
from tutor.diagnosis.flow import call_name, module_label, text
from tutor.diagnosis.lineage import Lineage, shape_text
from tutor.diagnosis.operand_checks import failed_op
from tutor.diagnosis.shape_checks import _constructor
from tutor.diagnosis.verify import runs_clean
from tutor.i18n import T

RANK = re.compile(r"expected (?P<wanted>\d+D(?: or \d+D)?) input \(got (?P<got>\d+)D input\)")
FAMILIES = {
    # the family and, by the rank of its input, the member built for it
    "BatchNorm": {2: "BatchNorm1d", 3: "BatchNorm1d", 4: "BatchNorm2d", 5: "BatchNorm3d"},
    "InstanceNorm": {2: "InstanceNorm1d", 3: "InstanceNorm1d", 4: "InstanceNorm2d",
                     5: "InstanceNorm3d"},
}
MEANING = {2: "(batch, features)", 3: "(batch, channels, length)",
           4: "(batch, channels, height, width)", 5: "(batch, channels, depth, height, width)"}


def check_norm_rank(ctx: Ctx) -> list[Candidate]:
    found = RANK.search(ctx.message) if ctx.error is not None else None
    failed = failed_op(ctx, "forward") if found is not None else None
    if found is None or failed is None or not failed.module or not failed.module_kind:
        return []
    kind = failed.module_kind
    family = next((f for f in FAMILIES if kind.startswith(f)), None)
    got = int(found.group("got"))
    meant = FAMILIES[family].get(got) if family is not None else None
    built = _constructor(ctx, failed.module, kind) if meant is not None else None
    if meant is None or built is None or meant == kind:
        return []
    given = failed.inputs[0] if failed.inputs else None
    if given is not None and Lineage(given).entered_unbatched():
        return []  # one sample without its batch dimension: the layer is right, the data not
    fill: dict[str, object] = {
        "line": built.lineno, "fail_line": ctx.fail_line or failed.line,
        "name": module_label(failed.module), "module": kind, "new": meant,
        "count": got, "wanted": found.group("wanted"),
        "shape": shape_text(given.shape) if given is not None else f"{got}-D",
        "detail": MEANING.get(got, f"{got} dimensions"),
    }
    func = built.func
    new = f"{text(func.value)}.{meant}" if isinstance(func, ast.Attribute) else meant
    edit = replace_node(ctx.code, func, new) if call_name(built) == kind else None
    fixes = [Fix((edit,), runs_clean, T(
        f"build a `{meant}` on line {built.lineno}, for the {got}-D input it is given",
        f"第 {built.lineno} 行改建 `{meant}`，与它拿到的 {got} 维输入相符"))] \
        if edit is not None else []
    return [Candidate("norm-rank-mismatch", built.lineno, 0.9, [
        ("norm-given-rank", fill)], fixes, fill)]


EXCEPTION_CHECKS: tuple[Check, ...] = (check_norm_rank,)
SILENT_CHECKS: tuple[Check, ...] = ()

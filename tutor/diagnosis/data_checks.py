"""Checks of how the data meets the model: inputs and their labels shuffled by two different
permutations, so each input is trained on another sample's label (a silent bug: the loss
falls only as far as the labels' base rate allows). Found in the source, confirmed by the
behaviour: one permutation for both must make the loss fall further."""

from __future__ import annotations

import ast
import itertools

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import Edit, Fix, replace_node
from tutor.diagnosis.flow import call_name, text
from tutor.diagnosis.verify import loss_improves
from tutor.i18n import T


def _permutation(ctx: Ctx, index: ast.expr, before: int) -> ast.Call | None:
    """The ``torch.randperm(...)`` call an index is, or the one its name was last given."""
    if isinstance(index, ast.Call) and call_name(index) == "randperm":
        return index
    if isinstance(index, ast.Name):
        made = ctx.flow.assigned_before(index.id, before)
        value = ctx.flow.value_of(made) if made is not None else None
        if isinstance(value, ast.Call) and call_name(value) == "randperm":
            return value
    return None


def check_shuffled_apart(ctx: Ctx) -> list[Candidate]:
    """``x = x[torch.randperm(n)]`` and ``y = y[torch.randperm(n)]``: two permutations, so
    the pairs of input and label are broken. Index both with one."""
    if ctx.error is not None or not ctx.evidence.backwards:
        return []
    flow = ctx.flow
    shuffles: list[tuple[ast.stmt, ast.Subscript, ast.Call]] = []
    for stmt in flow.statements:
        if not isinstance(stmt, ast.Assign):
            continue
        for node in ast.walk(stmt.value):
            if isinstance(node, ast.Subscript):
                perm = _permutation(ctx, node.slice, stmt.lineno)
                if perm is not None:
                    shuffles.append((stmt, node, perm))
    out = []
    for (first, a, pa), (second, b, pb) in itertools.pairwise(shuffles):
        if pa is pb or flow.scope_of(first) is not flow.scope_of(second) or (
                second.lineno - first.lineno > 3) or text(a.value) == text(b.value):
            continue
        taken = flow.names_in(flow.tree)
        name = next((n for n in ("perm", "order", "shuffled_order") if n not in taken), None)
        if name is None:
            continue
        edits = [replace_node(ctx.code, a.slice, name), replace_node(ctx.code, b.slice, name)]
        if any(e is None for e in edits):
            continue
        made = Edit("insert_before", first.lineno, f"{name} = {text(pa)}")
        fix = Fix((*[e for e in edits if e is not None], made), loss_improves, T(
            f"shuffle both with one permutation: `{name} = {text(pa)}` before line "
            f"{first.lineno}, then `{text(a.value)}[{name}]` and `{text(b.value)}[{name}]`",
            f"用同一个排列打乱两者：在第 {first.lineno} 行之前写 `{name} = {text(pa)}`，"
            f"然后用 `{text(a.value)}[{name}]` 和 `{text(b.value)}[{name}]`"))
        out.append(Candidate("shuffle-apart", first.lineno, 0.85, [
            ("shuffled-apart", {"line": first.lineno, "fail_line": second.lineno,
                                "name": text(a.value), "target": text(b.value)})],
            [fix], {"line": first.lineno, "fail_line": second.lineno, "name": text(a.value),
                    "target": text(b.value)}))
    return out


SHIFT = 1.0
"""How many of the training inputs' standard deviations the mean of what a model predicts on
may lie away from theirs: a random split of one dataset lies well within a tenth of one."""
SPREAD = 3.0
"""How many times wider or narrower their spread may be."""


def check_inputs_unlike_training(ctx: Ctx) -> list[Candidate]:
    """A model asked to predict (gradients off or in eval mode, never trained on) on inputs
    whose values lie far from those it trained on: the data it predicts on was not prepared
    like its training data (not normalised, scaled with other statistics). Read off the
    spread of the first input of each call; no change is tried (what the training data got
    is the learner's to apply), so it says where and by how much."""
    if ctx.error is not None:
        return []
    calls = ctx.evidence.modules
    out = []
    for module in dict.fromkeys(c.module for c in calls):
        trained = [c for c in calls if c.module == module and c.backward and c.inputs]
        asked = [c for c in calls if c.module == module and not c.backward and c.inputs
                 and (not c.grad_enabled or not c.training)]
        if not trained or not asked:
            continue
        seen = trained[0].inputs
        assert seen is not None
        for call in asked:
            given = call.inputs
            assert given is not None
            scale = max(seen.std, 1e-8)
            shift = abs(given.mean - seen.mean) / scale
            ratio = max(given.std, 1e-8) / scale
            if shift < SHIFT and 1 / SPREAD < ratio < SPREAD:
                continue
            fill: dict[str, object] = {
                "line": call.line, "module": module, "fail_line": trained[0].line,
                "detail": T(f"mean {given.mean:.3g}, spread {given.std:.3g}, from {given.low:.3g} "
                            f"to {given.high:.3g}",
                            f"均值 {given.mean:.3g}，标准差 {given.std:.3g}，范围 {given.low:.3g} "
                            f"到 {given.high:.3g}"),
                "label": T(f"mean {seen.mean:.3g}, spread {seen.std:.3g}, from {seen.low:.3g} "
                           f"to {seen.high:.3g}",
                           f"均值 {seen.mean:.3g}，标准差 {seen.std:.3g}，范围 {seen.low:.3g} "
                           f"到 {seen.high:.3g}")}
            out.append(Candidate("inputs-unlike-training", call.line, 0.6, [
                ("inputs-compared", fill)], [], fill, pinned=True, direction=T(
                    f"Prepare what line {call.line} gives `{module}` exactly as the training "
                    f"data was prepared (the same normalisation, with the training set's "
                    f"statistics), then compare the predictions again.",
                    f"把第 {call.line} 行交给 `{module}` 的数据按训练数据完全相同的方式预处理"
                    "（相同的归一化，使用训练集的统计量），然后再比较预测结果。")))
            break
    return out[:1]


EXCEPTION_CHECKS: tuple[Check, ...] = ()
SILENT_CHECKS: tuple[Check, ...] = (check_shuffled_apart, check_inputs_unlike_training)

"""Checks of exceptions about what an op was given: shapes, dtypes, class labels, the truth
value of a tensor, a BatchNorm given one sample.

The instrumented re-run names the op that raised, its operands and the line that made each
one (:class:`~tutor.sandbox.models.FailedOpEvidence`): the root cause is where the wrong
operand was made (a NumPy array turned into a float64 tensor, images kept channels-last, a
``view(-1, n)`` that mixed samples) or where the layer that expects something else was built.
"""

from __future__ import annotations

import ast
import re

from tutor.diagnosis import fixes as fx
from tutor.diagnosis.candidate import Candidate, Check, Ctx, at_failing_line
from tutor.diagnosis.fixes import Edit, Fix
from tutor.diagnosis.flow import call_name, module_label, receiver, text
from tutor.diagnosis.lineage import Lineage, Step
from tutor.diagnosis.training_checks import _eval_candidates
from tutor.diagnosis.verify import runs_clean
from tutor.i18n import T, Text
from tutor.sandbox.models import ChainLink, FailedOpEvidence, OperandEvidence

RESHAPES = ("view", "reshape")
FLOAT32 = "torch.float32"
FLOAT_OPS = frozenset({"linear", "conv1d", "conv2d", "conv3d", "matmul", "mm", "bmm",
                       "__matmul__", "addmm", "bilinear", "lstm", "gru", "rnn_tanh"})


def failed_op(ctx: Ctx, *ops: str) -> FailedOpEvidence | None:
    """The op that raised the run's error (one of ``ops`` when given)."""
    failed = ctx.evidence.failed
    if failed is None or (ops and failed.op not in ops):
        return None
    if failed.line not in {ctx.fail_line, *ctx.trace_lines()}:
        return None  # an earlier failure the program caught, not this error
    return failed


def operand(failed: FailedOpEvidence | None, *args: str) -> OperandEvidence | None:
    if failed is None:
        return None
    return next((o for o in failed.inputs if o.arg in args), None)


def made_line(ctx: Ctx, item: OperandEvidence) -> int | None:
    """Where an operand was made: the provenance's line, else the last assignment of its
    (outermost) name before the call that failed."""
    if item.line is not None:
        return item.line
    frames = ctx.error.traceback if ctx.error is not None else []
    outer = frames[0].line if frames else ctx.fail_line
    if item.name is None or outer is None:
        return None
    stmt = ctx.flow.assigned_before(item.name, outer + 1)
    return stmt.lineno if stmt is not None else None


def _int_arg(call: ast.Call, index: int, keyword: str) -> ast.expr | None:
    found = next((k.value for k in call.keywords if k.arg == keyword), None)
    if found is None and index < len(call.args):
        found = call.args[index]
    return found


def _layer_fix(ctx: Ctx, call: ast.Call, index: int, keyword: str, value: int,
               describe: Text) -> Fix | None:
    arg = _int_arg(call, index, keyword)
    edit = fx.replace_node(ctx.code, arg, str(value)) if arg is not None else None
    return Fix((edit,), runs_clean, describe) if edit is not None else None


# -- shapes ------------------------------------------------------------------------------
MATMUL = re.compile(r"mat1 and mat2 shapes cannot be multiplied \((\d+)x(\d+) and (\d+)x(\d+)\)")


def check_linear_shape(ctx: Ctx) -> list[Candidate]:
    m = MATMUL.search(ctx.message)
    if not m:
        return []
    got, expected = int(m.group(2)), int(m.group(3))
    fail = ctx.fail_line or 0
    steps_head: tuple[str, dict[str, object]] = ("shape-mismatch", {
        "fail_line": fail, "shape": f"{got}", "target_shape": f"{expected}"})
    failed = failed_op(ctx, "linear")
    replaced = _weight_replaced(ctx, failed)
    if replaced is not None:
        return [replaced]
    given = operand(failed, "0", "input")
    lineage = Lineage(given) if given is not None else None
    kept = lineage is not None and lineage.batch_kept()
    unbatched = lineage is not None and lineage.entered_unbatched()
    # rows that are the samples of a batch (the lineage flattened each one and kept them
    # apart) are not one sample to flatten, whatever their product; nor are the rows of a
    # sample that went in without its batch dimension (shape_checks: missing-batch-dim)
    flat = _unflattened(ctx, given, expected) or (
        None if kept or unbatched else _one_sample_unflattened(ctx, given, expected)) \
        or _mixed_batch(ctx, given, expected)
    if flat is not None:
        return [flat]
    batch = lineage.data_batch() if lineage is not None else None
    if unbatched or (lineage is not None and batch and lineage.lost(batch)):
        # the layer is right for a batch; the sample came without one, or an op on the way
        # ran the samples together (shape_checks): a layer resized to the merged width
        # would run, and learn across samples
        return []
    name = failed.module if failed is not None else None
    call = ctx.flow.constructor(name, "Linear") if name else None
    if call is None:
        name, call = _linear_on_line(ctx, fail)
    if call is not None and name and given is not None and _feature_maps(given):
        # (N, C, H, W) from conv layers: the layer would read every row of every map as a
        # sample; flatten each sample and size the layer for C*H*W features
        return [_flatten_and_resize(ctx, given, call, module_label(name))]
    if call is not None and name:
        short = module_label(name)
        line = (_int_arg(call, 0, "in_features") or call).lineno
        fix = _layer_fix(ctx, call, 0, "in_features", got, T(
            f"give `{short}` {got} input features on line {line}",
            f"在第 {line} 行让 `{short}` 接收 {got} 个输入特征"))
        steps = [steps_head]
        if kept and lineage is not None and given is not None:
            # the rows are the samples: the layer, not the data, has the other size
            start = lineage.start()
            made = start.line if start is not None and start.shape[:1] == given.shape[:1] \
                else None
            steps.append(("batch-kept", {"name": given.name, "shape": str(tuple(given.shape)),
                                         "count": given.shape[0], "numel": got, "line": made}))
        return [Candidate("linear-in-features", line, 0.8, [
            *steps, ("layer-defined", {"line": line, "module": short})],
            [fix] if fix else [], {"line": line, "module": short})]
    edit = fx.replace_in_line(ctx.code, fail, r"mm\((\w+),\s*(\w+)\)", r"mm(\1, \2.T)")
    if edit is None:
        return []
    return [Candidate("mm-shape-mismatch", fail, 0.6, [steps_head],
                      [Fix((edit,), runs_clean, T(f"transpose the second operand on line {fail}",
                                                  f"在第 {fail} 行转置第二个操作数"))],
                      {"line": fail})]


def _weight_replaced(ctx: Ctx, failed: FailedOpEvidence | None) -> Candidate | None:
    """A ``nn.Linear(in, out)`` whose weight the run saw of another shape than (out, in): a
    statement put another tensor in its place (an output layer tied to an embedding of
    another size, a weight copied from another layer). That assignment is the cause, whatever
    the input; the layer as built would take it."""
    if failed is None or not failed.module:
        return None
    size_in, size_out = failed.config.get("in_features"), failed.config.get("out_features")
    weight = operand(failed, "1", "weight")
    if not isinstance(size_in, int) or not isinstance(size_out, int) or weight is None or \
            weight.shape == [size_out, size_in]:
        return None
    attr = failed.module.split(".")[-1]
    assigned = [s for s in ctx.flow.statements if isinstance(s, ast.Assign)
                and any(text(t).endswith(f"{attr}.weight") for t in s.targets)]
    if len(assigned) != 1:
        return None
    stmt = assigned[0]
    short = module_label(failed.module)
    fill: dict[str, object] = {"line": stmt.lineno, "module": short,
                               "shape": str(tuple(weight.shape)),
                               "target_shape": str((size_out, size_in))}
    return Candidate("layer-weight-replaced", stmt.lineno, 0.9, [
        ("weight-replaced", fill)], [], fill, pinned=True)


def _unflattened(ctx: Ctx, given: OperandEvidence | None, expected: int) -> Candidate | None:
    """A layer that expects the flattened sample got it unflattened (images (N, C, H, W)
    into ``nn.Linear(C*H*W, ...)``): flatten it where the layer is called."""
    if given is None or len(given.shape) < 3:
        return None
    per_sample = 1
    for size in given.shape[1:]:
        per_sample *= size
    if per_sample != expected:
        return None
    line, stmt = ctx.failing_statement()
    names = {given.name} if given.name else set()
    arg = next((a for n in ast.walk(stmt) if isinstance(n, ast.Call) for a in n.args
                if text(a) in names), None) if stmt is not None else None
    edit = fx.replace_node(ctx.code, arg, f"{text(arg)}.flatten(1)") if arg is not None else None
    return Candidate("linear-in-features", line, 0.85, [
        ("not-flattened", {"fail_line": line, "name": given.name,
                           "shape": str(tuple(given.shape)), "count": expected})],
        [Fix((edit,), runs_clean, T(
            f"flatten each sample before the layer on line {line}: `{text(arg)}.flatten(1)`",
            f"第 {line} 行在进入该层前把每个样本展平：`{text(arg)}.flatten(1)`"))]
        if edit is not None and arg is not None else [], {"line": line})


def _mixed_batch(ctx: Ctx, given: OperandEvidence | None, expected: int) -> Candidate | None:
    """``x.view(-1, K)`` before a layer built for the right width, with K not a sample's
    size: the rows are no longer the samples. Keep one row per sample there."""
    history = given.history if given is not None else []
    if given is None or len(history) < 2 or history[0].op not in ("view", "reshape"):
        return None
    before = history[1].shape
    if not before or len(before) < 2 or len(given.shape) != 2:
        return None
    per_sample = 1
    for size in before[1:]:
        per_sample *= size
    rows, width = given.shape
    if per_sample != expected or width == per_sample or rows == before[0]:
        return None
    line = history[0].line
    stmt = ctx.flow.statement_at(line)
    call = next((n for n in ast.walk(stmt) if isinstance(n, ast.Call) and isinstance(
        n.func, ast.Attribute) and n.func.attr == history[0].op and n.args), None) \
        if stmt is not None else None
    if call is None or not isinstance(call.func, ast.Attribute):
        return None
    owner = text(call.func.value)
    edit = fx.replace_nodes(ctx.code, [(call, f"{owner}.{history[0].op}({owner}.size(0), -1)")])
    return Candidate("flatten-mixes-batch", line, 0.85, [
        ("mixes-batch", {"line": line, "shape": str(tuple(before)), "count": width,
                         "numel": per_sample, "low": before[0], "high": rows,
                         "fail_line": ctx.fail_line or 0})],
        [Fix((edit,), runs_clean, T(
            f"keep one row per sample on line {line}: `{owner}.{history[0].op}"
            f"({owner}.size(0), -1)`",
            f"第 {line} 行保持每个样本一行：`{owner}.{history[0].op}({owner}.size(0), -1)`"))]
        if edit is not None else [],
        {"line": line, "op": f"{history[0].op}", "shape": str(tuple(before)), "count": width,
         "numel": per_sample, "low": before[0], "high": rows})


SPATIAL_OPS = frozenset({"conv1d", "conv2d", "conv3d", "max_pool1d", "max_pool2d",
                         "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d",
                         "adaptive_avg_pool2d", "adaptive_max_pool2d", "batch_norm"})


def _feature_maps(given: OperandEvidence) -> bool:
    """Feature maps of conv layers (N, C, H, W), not a sequence (N, T, F) whose last
    dimension a Linear rightly reads."""
    return len(given.shape) >= 4 or (len(given.shape) == 3 and any(
        link.op in SPATIAL_OPS for link in given.history))


def _call_arg(ctx: Ctx, given: OperandEvidence, module: str | None = None
              ) -> tuple[int, ast.expr | None]:
    """The failing line and the argument on it that is ``given``: by the learner's name,
    else the first argument of the call of ``module`` (``self.head(self.features(x))``)."""
    line, stmt = ctx.failing_statement()
    calls = [n for n in ast.walk(stmt) if isinstance(n, ast.Call)] if stmt is not None else []
    names = {given.name} if given.name else set()
    arg = next((a for n in calls for a in n.args if text(a) in names), None)
    if arg is None and module:
        last = module.split(".")[-1]
        arg = next((n.args[0] for n in calls if n.args and text(n.func).split(".")[-1]
                    .removesuffix("()") == last), None)
    return line, arg


def _one_sample_unflattened(ctx: Ctx, given: OperandEvidence | None, expected: int
                            ) -> Candidate | None:
    """One sample (28, 28) into ``nn.Linear(784, ...)``: its numbers are the features the
    layer wants, not 28 samples of 28 (``in_features=28`` would run, reading rows as
    samples). Flatten it into one row."""
    if given is None or len(given.shape) != 2 or given.shape[0] * given.shape[1] != expected \
            or _batch_first(given):
        return None
    line, arg = _call_arg(ctx, given)
    edit = fx.replace_node(ctx.code, arg, f"{text(arg)}.reshape(1, -1)") if arg is not None \
        else None
    return Candidate("linear-in-features", line, 0.85, [
        ("one-sample-unflattened", {"fail_line": line, "name": given.name,
                                    "shape": str(tuple(given.shape)), "count": expected})],
        [Fix((edit,), runs_clean, T(
            f"flatten the sample into one row of {expected} features on line {line}: "
            f"`{text(arg)}.reshape(1, -1)`",
            f"第 {line} 行把这个样本展平成一行 {expected} 个特征：`{text(arg)}.reshape(1, -1)`"))]
        if edit is not None and arg is not None else [], {"line": line})


def _batch_first(given: OperandEvidence) -> bool:
    """The history shows the first dimension is a batch: an earlier tensor of three or more
    dimensions (images, feature maps) that led to this one had the same first size. Four
    rows of 512 features that happen to make 2048 numbers are not one sample."""
    return any(link.shape is not None and len(link.shape) >= 3
               and link.shape[0] == given.shape[0] for link in given.history)


def _flatten_and_resize(ctx: Ctx, given: OperandEvidence, call: ast.Call, short: str
                        ) -> Candidate:
    line, arg = _call_arg(ctx, given, short)
    sizes = " * ".join(str(n) for n in given.shape[1:])
    count = 1
    for size in given.shape[1:]:
        count *= size
    width = _int_arg(call, 0, "in_features")
    built = (width or call).lineno
    edits = [fx.replace_node(ctx.code, arg, f"{text(arg)}.flatten(1)") if arg is not None
             else None, fx.replace_node(ctx.code, width, sizes) if width is not None else None]
    fixes = [Fix((edits[0], edits[1]), runs_clean, T(
        f"flatten each sample before `{short}` on line {line} (`{text(arg)}.flatten(1)`) and "
        f"build it for {sizes} = {count} input features on line {built}",
        f"第 {line} 行在 `{short}` 之前展平每个样本（`{text(arg)}.flatten(1)`），并在第 {built} "
        f"行让它接收 {sizes} = {count} 个输入特征"))] if edits[0] and edits[1] and arg else []
    return Candidate("linear-in-features", built, 0.85, [
        ("maps-not-flattened", {"fail_line": line, "name": given.name or (
            text(arg) if arg is not None else None),
                                "shape": str(tuple(given.shape)), "count": count,
                                "line": built, "module": short})],
        fixes, {"line": built, "module": short})


def _linear_on_line(ctx: Ctx, line: int) -> tuple[str | None, ast.Call | None]:
    """A layer called on the failing line that the program builds with ``nn.Linear``."""
    stmt = ctx.flow.statement_at(line)
    for node in ast.walk(stmt) if stmt is not None else ():
        if isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute)):
            callee = text(node.func)
            call = ctx.flow.constructor(callee, "Linear")
            if call is not None and call_name(call) == "Linear":
                return callee, call
    return None, None


VIEW = re.compile(r"shape '\[([^\]]*)\]' is invalid for input of size (\d+)")


def _flatten_fixes(ctx: Ctx, line: int, describe_line: int) -> list[Fix]:
    """Flatten each sample instead of a ``view``/``reshape`` that fixes the feature count."""
    stmt = ctx.flow.statement_at(line)
    fixes = []
    for call in ast.walk(stmt) if stmt is not None else ():
        if not (isinstance(call, ast.Call) and call_name(call) in RESHAPES and receiver(call)):
            continue
        base = receiver(call)
        for new in (f"{base}.flatten(1)", f"{base}.view({base}.size(0), -1)"):
            fix = fx.node_fix(ctx.code, call, new, runs_clean, T(
                f"keep one row per sample on line {describe_line}: `{new}`",
                f"第 {describe_line} 行保持每个样本一行：`{new}`"))
            fixes.extend([fix] if fix else [])
    return fixes


def check_view_shape(ctx: Ctx) -> list[Candidate]:
    m = VIEW.search(ctx.message)
    if not m or len(m.group(1).split(",")) != 2:
        return []  # only a flatten to (batch, features) has a fix that follows from the data
    line = ctx.fail_line or 0
    fixes = _flatten_fixes(ctx, line, line)
    if not fixes:
        return []
    return [Candidate("view-invalid-shape", line, 0.75, [
        ("view-size", {"line": line, "target": f"({m.group(1)})", "numel": m.group(2)})],
        fixes, {"line": line})]


BATCH = re.compile(r"Expected input batch_size \((\d+)\) to match target batch_size \((\d+)\)")


def check_batch(ctx: Ctx) -> list[Candidate]:
    m = BATCH.search(ctx.message)
    if not m:
        return []
    have = int(m.group(1))
    fail = ctx.fail_line or 0
    given = operand(failed_op(ctx), "1", "target")
    if int(m.group(2)) == 0 and given is not None and given.shape == []:
        return _single_label(ctx, fail)
    scores = operand(failed_op(ctx), "0", "input")
    history = scores.history if scores is not None else []
    for index, link in enumerate(history):
        before = history[index + 1].shape if index + 1 < len(history) else None
        if link.op in RESHAPES and link.shape and link.shape[0] == have and not (
                before and before[0] == have):  # a reshape that kept dimension 0 mixed nothing
            labels = int(m.group(2))
            if before and len(before) >= 3 and len(link.shape) == 2 and \
                    link.shape[1] == before[-1] and _product(before[:-1]) == have and \
                    labels % before[0] == 0 and labels // before[0] not in (
                        1, _product(before[1:-1])):
                # (N, T, C) -> (N*T, C) keeps every position's row: nothing is mixed; the
                # labels are for sequences of another length
                return _sequence_lengths(ctx, history, before, labels)
            width = _hard_coded_width(ctx, link, before, labels)
            if width is not None:
                return [width]
            fixes = _flatten_fixes(ctx, link.line, link.line)
            return [Candidate("ce-batch-mismatch", link.line, 0.8, [
                ("batch", {"fail_line": fail}), ("view-mixes", {"line": link.line})],
                fixes, {"line": link.line})]
    return []


def _single_label(ctx: Ctx, fail: int) -> list[Candidate]:
    """A target batch size of 0: the label is one number (``target[c]`` of a 1-D tensor is
    0-d), which a loss reads as a batch with no labels. The fix tried gives it the batch's
    dimension back."""
    stmt = ctx.flow.statement_at(fail)
    calls = [n for n in ast.walk(stmt) if isinstance(n, ast.Call) and len(n.args) >= 2] \
        if stmt is not None else []
    if not calls:
        return []
    target = calls[0].args[1]
    name = text(target)
    new = f"{name}.unsqueeze(0)"
    fix = fx.node_fix(ctx.code, target, new, runs_clean, T(
        f"give the label its batch dimension on line {fail}: `{new}` (one label for the one "
        "row of scores)", f"第 {fail} 行给标签加上批维度：`{new}`（一行分数对应一个标签）"))
    return [Candidate("ce-batch-mismatch", fail, 0.85, [
        ("batch", {"fail_line": fail}), ("label-is-number", {"line": fail, "name": name})],
        [fix] if fix is not None else [], {"line": fail, "name": name}, pinned=True)]


def _hard_coded_width(ctx: Ctx, link: ChainLink, before: list[int] | None, labels: int
                      ) -> Candidate | None:
    """``pred.view(-1, 4)`` of scores (N, T, C) whose C is not 4: the rows no longer are
    positions (5120 numbers make 1280 rows of 4, for 1024 labels). Where the labels are one
    for each row of the last dimension, that dimension is the width meant."""
    if not before or len(before) < 2 or not link.shape or len(link.shape) != 2:
        return None
    width = link.shape[1]
    if before[-1] == width or _product(before[:-1]) != labels:
        return None
    call = Step(link, before).node(ctx.flow)
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute):
        return None
    owner = text(call.func.value)
    new = f"{owner}.{call.func.attr}(-1, {owner}.size(-1))"
    fix = fx.node_fix(ctx.code, call, new, runs_clean, T(
        f"reshape with the size of the last dimension on line {link.line}: `{new}`",
        f"第 {link.line} 行按最后一维的大小变形：`{new}`"))
    return Candidate("ce-batch-mismatch", link.line, 0.85, [
        ("batch", {"fail_line": ctx.fail_line or 0}),
        ("hard-coded-width", {"line": link.line, "shape": str(tuple(before)), "count": width,
                              "numel": before[-1], "high": link.shape[0], "low": labels,
                              "expr": text(call)})],
        [fix] if fix else [], {"line": link.line}, pinned=True)


def _product(sizes: list[int]) -> int:
    out = 1
    for size in sizes:
        out *= size
    return out


def _sequence_lengths(ctx: Ctx, history: list[ChainLink], shape: list[int], labels: int
                      ) -> list[Candidate]:
    """Scores for N sequences of T positions against labels for N sequences of another
    length. Where the model's input was cut from the tensor the labels come from
    (``dec_in = question[:, :-1]``), the labels are that tensor shifted the other way
    (``question[:, 1:]``): the next token is the target of each position."""
    fail = ctx.fail_line or 0
    batch, steps = shape[0], _product(shape[1:-1])
    head: tuple[str, dict[str, object]] = ("lengths-differ", {
        "fail_line": fail, "count": f"{batch} × {steps}", "target": f"{labels}"})
    stmt = ctx.flow.statement_at(fail)
    for link in history:
        cut = _cut_from(ctx.flow.statement_at(link.line))
        if cut is None or stmt is None:
            continue
        base, k = cut
        uses = [n for n in ast.walk(stmt) if isinstance(n, ast.Name) and n.id == base]
        if len(uses) != 1:
            continue
        shifted = f"{base}[:, {k}:]"
        # a slice is not contiguous: its .view(-1) becomes .reshape(-1)
        view = next((c.func for c in ast.walk(stmt) if isinstance(c, ast.Call) and isinstance(
            c.func, ast.Attribute) and c.func.attr == "view" and c.func.value is uses[0]), None)
        edits = fx.replace_node(ctx.code, view, f"{shifted}.reshape") if view is not None \
            else fx.replace_node(ctx.code, uses[0], shifted)
        return [Candidate("ce-batch-mismatch", fail, 0.8, [head, ("input-cut", {
            "line": link.line, "name": base, "target": shifted})],
            [Fix((edits,), runs_clean, T(
                f"compare each position with the next token: `{shifted}` as the labels on "
                f"line {fail}", f"第 {fail} 行让每个位置对应下一个词：标签用 `{shifted}`"))]
            if edits is not None else [], {"line": fail})]
    return [Candidate("ce-batch-mismatch", fail, 0.6, [head], [], {"line": fail})]


def _cut_from(stmt: ast.stmt | None) -> tuple[str, int] | None:
    """``("question", 1)`` for ``x = question[:, :-1]``."""
    value = stmt.value if isinstance(stmt, ast.Assign) else None
    if not isinstance(value, ast.Subscript) or not isinstance(value.value, ast.Name):
        return None
    parts = value.slice.elts if isinstance(value.slice, ast.Tuple) else [value.slice]
    for part in parts:
        upper = part.upper if isinstance(part, ast.Slice) else None
        if isinstance(upper, ast.UnaryOp) and isinstance(upper.op, ast.USub) and isinstance(
                upper.operand, ast.Constant) and isinstance(upper.operand.value, int):
            return value.value.id, upper.operand.value
    return None


CONV = re.compile(r"expected input\[([\d, ]+)\] to have (\d+) channels, but got (\d+) channels")


def check_conv_channels(ctx: Ctx) -> list[Candidate]:
    m = CONV.search(ctx.message)
    failed = failed_op(ctx)
    if not m or failed is None:
        return []
    shape = [int(v) for v in m.group(1).split(",")]
    wanted, got = int(m.group(2)), int(m.group(3))
    images = operand(failed, "0", "input")
    fail = ctx.fail_line or 0
    out = []
    line = made_line(ctx, images) if images is not None else None
    if images is not None and line is not None and len(shape) == 4 and shape[-1] == wanted:
        # channels last: (N, H, W, C) where the layer wants (N, C, H, W)
        edit = fx.suffix_value(ctx.code, ctx.flow.statement_at(line), ".permute(0, 3, 1, 2)",
                            images.op)
        out.append(Candidate("conv-channels", line, 0.85, [
            ("channels-last", {"fail_line": fail, "shape": f"({m.group(1)})",
                               "line": line, "count": wanted})],
            [Fix((edit,), runs_clean, T(
                f"put the channels first where the images are made (line {line}): "
                "`.permute(0, 3, 1, 2)`",
                f"在创建图像的第 {line} 行把通道维放到前面：`.permute(0, 3, 1, 2)`"))]
            if edit else [], {"line": line}))
    if images is not None and line is not None and len(images.shape) == 3 and \
            images.shape[0] == got and wanted == 1:
        # (N, H, W): Conv2d reads an input of three dimensions as one image, so the batch
        # became the channels; the channel dimension is missing where the batch is made
        # (and building the layer for `got` channels would train on the batch as channels)
        edit = fx.suffix_value(ctx.code, ctx.flow.statement_at(line), ".unsqueeze(1)", images.op)
        name = images.name
        return [Candidate("conv-channels", line, 0.9, [
            ("batch-as-channels", {"fail_line": fail, "name": name,
                                   "shape": str(tuple(images.shape)), "count": got,
                                   "line": line})],
            [Fix((edit,), runs_clean, T(
                f"give the images their channel dimension where they are made (line {line}): "
                "`.unsqueeze(1)`",
                f"在创建图像的第 {line} 行加上通道维：`.unsqueeze(1)`"))] if edit else [],
            {"line": line, "name": name})]
    call = ctx.flow.constructor(failed.module, "Conv2d") if failed.module else None
    if call is not None:
        line = (_int_arg(call, 0, "in_channels") or call).lineno
        fix = _layer_fix(ctx, call, 0, "in_channels", got, T(
            f"build the layer for {got} input channels on line {line}",
            f"在第 {line} 行让该层接收 {got} 个输入通道"))
        out.append(Candidate("conv-channels", line, 0.6, [
            ("layer-channels", {"fail_line": fail, "line": line, "count": wanted})],
            [fix] if fix else [], {"line": line}))
    return out


# -- dtypes ------------------------------------------------------------------------------
DTYPE_MSG = re.compile(r"(expected scalar type (\w+) but found (\w+)|must have the same dtype|"
                       r"expected m1 and m2 to have the same dtype|"
                       r"Found dtype (\w+) but expected (\w+))")
MAKERS = ("from_numpy", "as_tensor", "tensor", "randint", "arange")
SCALAR_TYPES = {"Float": "torch.float32", "Double": "torch.float64", "Long": "torch.int64",
                "Int": "torch.int32", "Half": "torch.float16", "BFloat16": "torch.bfloat16"}


def check_dtype(ctx: Ctx) -> list[Candidate]:
    m = DTYPE_MSG.search(ctx.message)
    if not m:
        return []
    found = _dtype_from_operands(ctx, m)
    return found or _dtype_from_names(ctx)


def _dtype_from_operands(ctx: Ctx, m: re.Match[str]) -> list[Candidate]:
    """The operand whose dtype is not the one expected (float32 unless the message names
    another), fixed where it was made."""
    failed = failed_op(ctx)
    if failed is None:
        return []
    if any(o.dtype == FLOAT32 for o in failed.inputs):
        # float32 is what layers are built with: the odd ones out are wrong (integers only
        # where the op computes in floating point, not a loss's class labels)
        wrong = [o for o in failed.inputs if o.dtype != FLOAT32 and (
            "float" in o.dtype or failed.op in FLOAT_OPS)]
    else:
        found = SCALAR_TYPES.get(m.group(3) or m.group(4) or "")
        wrong = [o for o in failed.inputs if found and o.dtype == found]
    operands = [(o, made_line(ctx, o)) for o in wrong]
    fail = ctx.fail_line or 0
    out = []
    for item, near in [(o, n) for o, n in operands if n is not None][:2]:
        # a slice or reshape keeps the dtype: the tensor got it where its data was made
        line = _dtype_origin(ctx, near)
        stmt = ctx.flow.statement_at(line)
        op = item.op if line == near else None
        edits = [fx.replace_in_line(ctx.code, line, r"torch\.(float64|double)", "torch.float32"),
                 fx.suffix_value(ctx.code, stmt, ".float()", op)]
        name = item.name if line == near and item.name else (
            text(stmt.targets[0]) if isinstance(stmt, ast.Assign) else item.name)
        made = T(f"make `{name}` float32 where it is made (line {line})",
                 f"在创建 `{name}` 的第 {line} 行把它转为 float32") if name else T(
            f"make the tensor float32 where it is made (line {line})",
            f"在创建该张量的第 {line} 行把它转为 float32")
        fixes = [Fix((edit,), runs_clean, made) for edit in edits if edit]
        out.append(Candidate("dtype-mismatch", line, 0.8, [
            ("dtype-operand", {"fail_line": fail, "name": item.name or name,
                               "dtype": item.dtype, "op": failed.op}),
            ("made-here", {"line": line, "name": name})], fixes, {"line": line, "name": name}))
    return out


KEEPS_DTYPE = frozenset({"view", "reshape", "flatten", "squeeze", "unsqueeze", "t",
                         "transpose", "permute", "contiguous", "clone", "detach", "expand"})


def _dtype_origin(ctx: Ctx, line: int) -> int:
    """Back from the statement on ``line`` through assignments that only slice or reshape
    another name (``X = features[i:j]``) to the one that made the data (``features =
    torch.from_numpy(...)``)."""
    flow = ctx.flow
    stmt = flow.statement_at(line)
    for _ in range(8):
        value = flow.value_of(stmt) if stmt is not None else None
        base: ast.expr | None = None
        if isinstance(value, ast.Subscript):
            base = value.value
        elif isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and \
                value.func.attr in KEEPS_DTYPE:
            base = value.func.value
        if not isinstance(base, ast.Name) or stmt is None:
            break
        made = flow.assigned_before(base.id, stmt.lineno)
        if made is None or not isinstance(made, (ast.Assign, ast.AnnAssign)):
            break
        stmt = made
    return stmt.lineno if stmt is not None else line


def _dtype_from_names(ctx: Ctx) -> list[Candidate]:
    """Without operand evidence: names on the failing lines made from NumPy or as integers."""
    flow, fail = ctx.flow, ctx.fail_line or 0
    lines = [fail, *ctx.trace_lines()]
    names: set[str] = set()
    for line in lines:
        stmt = flow.statement_at(line)
        if stmt is not None:
            names |= flow.names_in(stmt)
    found = []
    for name in names:
        stmt = flow.assigned_before(name, max(lines) + 1)
        value = flow.value_of(stmt) if stmt is not None else None
        if stmt is None or value is None:
            continue
        src = text(value)
        if "from_numpy(" in src or "as_tensor(" in src or "float64" in src or \
                "double" in src or (any(f"{m}(" in src for m in MAKERS) and (
                    "np." in src or "numpy" in src or "long" in src or "randint" in src)):
            found.append((stmt, name))
    out = []
    for stmt, name in sorted(found, key=lambda p: p[0].lineno):
        line = stmt.lineno
        edit = fx.replace_in_line(ctx.code, line, r"\s*$", ".float()") if "float64" not in \
            flow.line(line) else fx.replace_in_line(ctx.code, line, r"torch\.float64",
                                                    "torch.float32")
        fixes = [Fix((edit,), runs_clean, T(f"make `{name}` float32 where it is created (line "
                                            f"{line})", f"在创建 `{name}` 的第 {line} 行把它转为 "
                                            "float32"))] if edit else []
        out.append(Candidate("dtype-mismatch", line, 0.7, [
            ("dtype", {"fail_line": fail}), ("made-here", {"line": line, "name": name})],
            fixes, {"line": line, "name": name}))
    return out


def check_embedding_indices(ctx: Ctx) -> list[Candidate]:
    """An embedding given float indices: make them integers where they are made."""
    if "'indices' to have one of the following scalar types" not in ctx.message:
        return []
    failed = failed_op(ctx, "embedding")
    indices = operand(failed, "0", "input")
    line = made_line(ctx, indices) if indices is not None else None
    if indices is None or line is None:
        return []
    if indices.op == "embedding" and failed is not None and failed.module:
        return _embedding_of_embedding(ctx, failed.module, indices)
    edit = fx.suffix_value(ctx.code, ctx.flow.statement_at(line), ".long()", indices.op)
    name = indices.name
    made = T(f"make `{name}` integer indices where it is made (line {line}): `.long()`",
             f"在创建 `{name}` 的第 {line} 行把它变成整数索引：`.long()`") if name else T(
        f"make the indices integers where they are made (line {line}): `.long()`",
        f"在创建索引的第 {line} 行把它们变成整数：`.long()`")
    return [Candidate("embedding-index-dtype", line, 0.8, [
        ("index-dtype", {"fail_line": ctx.fail_line or 0, "name": name, "dtype": indices.dtype,
                         "line": line})],
        [Fix((edit,), runs_clean, made)] if edit else [], {"line": line, "name": name})]


def _embedding_of_embedding(ctx: Ctx, module: str, indices: OperandEvidence
                            ) -> list[Candidate]:
    """The float "indices" are another Embedding's output (Embeddings chained in one
    ``nn.Sequential``): turning them into integers would look rows up by rounded vectors.
    The root is where the layers were chained."""
    ctx.refuted.add("embedding-index-dtype")  # its advice is `.long()`
    parent = module.rpartition(".")[0]
    chain = ctx.flow.constructor(parent, "Sequential") if parent else None
    line = chain.lineno if chain is not None else (indices.line or ctx.fail_line or 0)
    return [Candidate("embedding-of-embedding", line, 0.85, [
        ("embedding-output-as-indices", {"fail_line": ctx.fail_line or 0, "line": line,
                                         "module": module_label(module)})],
        [], {"line": line, "module": module_label(module)})]


def check_embedding_range(ctx: Ctx) -> list[Candidate]:
    """An index as large as the embedding's table: build the table one row larger than the
    largest index."""
    if "index out of range in self" not in ctx.message:
        return []
    failed = failed_op(ctx, "embedding")
    indices = operand(failed, "0", "input")
    call = ctx.flow.constructor(failed.module, "Embedding") if failed and failed.module else None
    if indices is None or indices.high is None or call is None:
        return []
    rows = int(indices.high) + 1
    line = (_int_arg(call, 0, "num_embeddings") or call).lineno
    fix = _layer_fix(ctx, call, 0, "num_embeddings", rows, T(
        f"give the embedding {rows} rows (indices 0 to {rows - 1}) on line {line}",
        f"第 {line} 行让嵌入表有 {rows} 行（索引 0 到 {rows - 1}）"))
    return [Candidate("embedding-index-range", line, 0.75, [
        ("index-range", {"fail_line": ctx.fail_line or 0, "high": int(indices.high),
                         "line": line})], [fix] if fix else [], {"line": line})]


# -- class labels ------------------------------------------------------------------------
LABEL_LOSSES = ("cross_entropy", "nll_loss")


def check_ce_target(ctx: Ctx) -> list[Candidate]:
    msg = ctx.message
    if "expected target dtype to be Long" in msg or "0D or 1D target tensor expected" in msg:
        return _label_form(ctx)
    if re.search(r"Target -?\d+ is out of bounds", msg):
        return _label_range(ctx)
    return []


def _labels(ctx: Ctx) -> tuple[OperandEvidence, OperandEvidence, int] | None:
    """The scores and the labels given to the loss, and the line that made the labels."""
    failed = failed_op(ctx, *LABEL_LOSSES)
    scores, labels = operand(failed, "0", "input"), operand(failed, "1", "target")
    line = made_line(ctx, labels) if labels is not None else None
    if scores is None or labels is None or line is None:
        return None
    return scores, labels, line


def _label_form(ctx: Ctx) -> list[Candidate]:
    """Labels given as floats or as a column: make them a 1-D integer tensor where made."""
    found = _labels(ctx)
    if found is None:
        return _label_names(ctx, "ce-target-dtype", ".long()")
    _, labels, line = found
    stmt = ctx.flow.statement_at(line)
    suffixes = [".view(-1).long()", ".squeeze(1).long()"] if len(labels.shape) == 2 and \
        labels.shape[1] == 1 else [".long()"]
    fixes = []
    for suffix in suffixes:
        edit = fx.suffix_value(ctx.code, stmt, suffix, labels.op)
        if edit is not None:
            fixes.append(Fix((edit,), runs_clean, T(
                f"make the labels one integer class index per sample on line {line}: "
                f"`{suffix}`", f"在第 {line} 行把标签变成每个样本一个整数类别索引：`{suffix}`")))
    name = labels.name
    cid = "ce-target-dtype" if "expected target dtype" in ctx.message else (
        "ce-target-float-shape" if labels.dtype.startswith("torch.float") else "ce-target-shape")
    return [Candidate(cid, line, 0.8, [
        ("labels-form", {"fail_line": ctx.fail_line or 0, "name": name, "dtype": labels.dtype,
                         "shape": str(tuple(labels.shape))}),
        ("made-here", {"line": line, "name": name})], fixes, {"line": line, "name": name})]


def _label_range(ctx: Ctx) -> list[Candidate]:
    """A label as large as the number of classes: labels counted from 1, or a last layer
    with too few outputs."""
    m = re.search(r"Target (-?\d+) is out of bounds", ctx.message)
    found = _labels(ctx)
    if found is None or m is None:
        return _label_names(ctx, "ce-target-out-of-bounds", None)
    scores, labels, line = found
    label = int(m.group(1))
    classes = scores.shape[1] if len(scores.shape) >= 2 else None
    fail = ctx.fail_line or 0
    out = []
    from_one = labels.low is not None and labels.low >= 1 and labels.high == classes
    edit = fx.suffix_value(ctx.code, ctx.flow.statement_at(line), " - 1", labels.op)
    if edit is not None and labels.low is not None and labels.low >= 1:
        out.append(Candidate("ce-target-out-of-bounds", line, 0.8 if from_one else 0.5, [
            ("labels-from-one", {"fail_line": fail, "line": line,
                                 "low": int(labels.low), "high": int(labels.high or 0)})],
            [Fix((edit,), runs_clean, T(f"number the labels from 0 on line {line}",
                                        f"在第 {line} 行让标签从 0 开始编号"))],
            {"line": line}))
    head = _last_layer(ctx, scores, classes)
    if head is not None and labels.high is not None:
        wanted = int(labels.high) + 1
        line = (_int_arg(head, 1, "out_features") or head).lineno
        fix = _layer_fix(ctx, head, 1, "out_features", wanted, T(
            f"give the last layer {wanted} outputs, one per class (line {line})",
            f"让最后一层输出 {wanted} 个值，每类一个（第 {line} 行）"))
        out.append(Candidate("ce-target-out-of-bounds", line, 0.6 if from_one else 0.8, [
            ("too-few-classes", {"fail_line": fail, "label": label, "count": classes,
                                 "line": line})], [fix] if fix else [], {"line": line}))
    return out


def _last_layer(ctx: Ctx, scores: OperandEvidence, classes: int | None) -> ast.Call | None:
    """The ``nn.Linear`` that made the scores: by the module the evidence names, else the
    only Linear of the program with that many outputs."""
    module = next((link.module for link in scores.history if link.module), None)
    call = ctx.flow.constructor(module) if module else None
    if call is not None and call_name(call) == "Sequential":
        call = next((a for a in reversed(call.args) if isinstance(a, ast.Call)
                     and call_name(a) == "Linear"), None)
    if call is not None and call_name(call) == "Linear":
        return call
    sized = [c for c in ctx.flow.calls if call_name(c) == "Linear" and isinstance(
        _int_arg(c, 1, "out_features"), ast.Constant) and getattr(
        _int_arg(c, 1, "out_features"), "value", None) == classes]
    return sized[0] if len(sized) == 1 else None


def _label_names(ctx: Ctx, cid: str, conv: str | None) -> list[Candidate]:
    """Without operand evidence: the tensors named on the failing lines, made by ``tensor``."""
    flow, fail = ctx.flow, ctx.fail_line or 0
    names: set[str] = set()
    for line in [fail, *ctx.trace_lines()]:
        st = flow.statement_at(line)
        if st is not None:
            names |= flow.names_in(st)
    last = max([fail, *ctx.trace_lines()]) + 1
    out = []
    for name in sorted(names):
        st = flow.assigned_before(name, last)
        if st is None or "tensor(" not in text(st):
            continue
        line = st.lineno
        edit = fx.replace_in_line(ctx.code, line, r"\s*$", conv) if conv else fx.replace_in_line(
            ctx.code, line, r"tensor\(\[([^\]]*)\]\)", "tensor([\\1]) - 1")
        describe = T(f"make the labels integer class indices on line {line}: `{conv}`",
                     f"在第 {line} 行把标签转为整数类别索引：`{conv}`") if conv else T(
            f"number the labels from 0 on line {line}", f"在第 {line} 行让标签从 0 开始编号")
        out.append(Candidate(cid, line, 0.6, [("labels", {"fail_line": fail}),
                                              ("made-here", {"line": line, "name": name})],
                             [Fix((edit,), runs_clean, describe)] if edit else [],
                             {"line": line, "name": name}))
    return out


# -- the truth value of a tensor ---------------------------------------------------------
def check_bool(ctx: Ctx) -> list[Candidate]:
    if "value of Tensor with more than one value is ambiguous" not in ctx.message:
        return []
    line, stmt = ctx.failing_statement()
    fixes = _truth_fixes(ctx, stmt, line) if stmt is not None else []
    return at_failing_line(ctx, "bool-ambiguous", "bool", list(fixes), 0.75)


def _truth_fixes(ctx: Ctx, stmt: ast.stmt, line: int) -> list[Fix]:
    """Where Python asks a tensor for True/False on the line, say which is meant: the
    ``a and b or c`` idiom becomes ``b if a else c``; a tested tensor is reduced with
    ``.all()`` (or ``.any()``)."""
    fixes = []
    tested_at_all = _truth_tested(stmt)
    choices: list[tuple[ast.AST, str, Text]] = []
    for node in ast.walk(stmt):
        if not isinstance(node, ast.BoolOp) or not isinstance(node.op, ast.Or) or len(
                node.values) != 2:
            continue
        first, default = node.values
        if isinstance(first, ast.BoolOp) and isinstance(first.op, ast.And) and len(
                first.values) == 2:
            cond, then = first.values
            new = f"({text(then)} if {text(cond)} else {text(default)})"
            asked = text(then)
            choices.append((node, new, T(
                f"write the choice on line {line} as `{new}`: `and ... or` asks `{asked}` "
                "for its truth value",
                f"把第 {line} 行的选择写成 `{new}`：`and ... or` 会要求 `{asked}` 给出真假值")))
        elif _tensorish(ctx, first) or tested_at_all == [first]:
            # `state or torch.zeros(...)`: the default for a missing value (None), which
            # asks a tensor, once there is one, for its truth value
            given = text(first)
            new = f"({given} if {given} is not None else {text(default)})"
            choices.append((node, new, T(
                f"test for a missing value on line {line} explicitly: `{new}`; `or` asks "
                f"`{given}` for its truth value once it is a tensor",
                f"第 {line} 行明确检验值是否缺失：`{new}`；`{given}` 一旦是张量，"
                "`or` 就会要求它给出真假值")))
    for node, new, describe in choices:
        edit = fx.replace_node(ctx.code, node, new)
        if edit is not None:
            fixes.append(Fix((edit,), runs_clean, describe))
    counted = _counting_fix(ctx, stmt, line)
    if counted is not None:
        # a count of matches (`correct += 1 if pred == y else 0`): the comparison is meant
        # element by element, and .all()/.any() would count whole batches instead
        return [*fixes, counted]
    tested = [n for n in _truth_tested(stmt) if _tensorish(ctx, n)]
    named = [n for n in tested if isinstance(n, (ast.Name, ast.Attribute))]
    if named and len(named) == len(tested) and isinstance(stmt, (ast.If, ast.While)):
        # `if mask:` on a tensor is Python's test for "is there one", not a test of its
        # values: the presence test comes first
        edit = fx.replace_nodes(ctx.code, [(n, f"{text(n)} is not None") for n in named])
        if edit is not None:
            shown = " and ".join(f"`{text(n)} is not None`" for n in named)
            fixes.append(Fix((edit,), runs_clean, T(
                f"test whether there is a tensor on line {line}, not its values: {shown}",
                f"第 {line} 行检验是否有这个张量，而不是它的值：{shown}")))
    for reduce in ("all", "any"):
        edit = fx.replace_nodes(ctx.code, [(n, fx.postfix(n, f".{reduce}()")) for n in tested])
        if edit is not None:
            fixes.append(Fix((edit,), runs_clean, T(
                f"say which you mean on line {line}: all elements (`.all()`) or any "
                "(`.any()`)", f"在第 {line} 行说明你的意思：所有元素（`.all()`）还是任一元素"
                "（`.any()`）")))
    return fixes


def _counting_fix(ctx: Ctx, stmt: ast.stmt, line: int) -> Fix | None:
    """``n += 1 if a == b else 0`` (or ``if a == b: n += 1``) on tensors: count the matching
    elements, ``n += (a == b).sum().item()``; a counter of the same loop that adds 1 for
    what was compared (``total += 1``) counts its elements too."""
    flow = ctx.flow
    test: ast.expr | None = None
    counter: str | None = None
    edits: list[Edit] = []
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.op, ast.Add) and isinstance(
            stmt.value, ast.IfExp) and _is_number(stmt.value.body, 1) and _is_number(
            stmt.value.orelse, 0):
        test, counter = stmt.value.test, text(stmt.target)
    elif isinstance(stmt, ast.If) and not stmt.orelse and len(stmt.body) == 1 and isinstance(
            stmt.body[0], ast.AugAssign) and isinstance(stmt.body[0].op, ast.Add) and \
            _is_number(stmt.body[0].value, 1):
        test, counter = stmt.test, text(stmt.body[0].target)
        edits.append(Edit("delete", stmt.body[0].lineno))
    if test is None or counter is None or not isinstance(test, ast.Compare) or len(
            test.comparators) != 1 or not _tensorish(ctx, test):
        return None
    indent = fx.indent_of(flow.line(line))
    edits.append(Edit("replace", line, f"{indent}{counter} += ({text(test)}).sum().item()"))
    compared = test.comparators[0]
    parent = flow.parents.get(stmt)
    other = next((s for s in getattr(parent, "body", []) if s is not stmt and isinstance(
        s, ast.AugAssign) and isinstance(s.op, ast.Add) and _is_number(s.value, 1)
        and text(s.target) != counter and s.lineno == s.end_lineno), None)
    also, also_zh = "", ""
    if other is not None:
        total = f"{text(other.target)} += {fx.postfix(compared, '.numel()')}"
        edits.append(Edit("replace", other.lineno, fx.indent_of(flow.line(other.lineno)) + total))
        also = f", and count the compared elements on line {other.lineno}: `{total}`"
        also_zh = f"，第 {other.lineno} 行也按比较的元素个数累加：`{total}`"
    return Fix(tuple(edits), runs_clean, T(
        f"count the matching elements on line {line}: `{counter} += ({text(test)}).sum()"
        f".item()` (`{text(test)}` compares element by element){also}",
        f"第 {line} 行统计相等的元素个数：`{counter} += ({text(test)}).sum().item()`"
        f"（`{text(test)}` 是逐元素比较）{also_zh}"))


def _is_number(node: ast.expr, value: int) -> bool:
    return isinstance(node, ast.Constant) and node.value == value and not isinstance(
        node.value, bool)


def _truth_tested(stmt: ast.stmt) -> list[ast.expr]:
    """The expressions of a statement whose truth value Python takes: an ``if``/``while``/
    ``assert`` test, the operand of ``not``, a conditional's test, the operands of
    ``and``/``or`` but the last (the last too where the whole is tested, or is a
    comparison)."""
    found: list[ast.expr] = []

    def visit(node: ast.AST, is_tested: bool) -> None:
        if isinstance(node, ast.BoolOp):
            for index, value in enumerate(node.values):
                last = index == len(node.values) - 1
                visit(value, is_tested or not last or isinstance(value, ast.Compare))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            visit(node.operand, True)
        elif isinstance(node, ast.IfExp):
            visit(node.test, True)
            visit(node.body, is_tested)
            visit(node.orelse, is_tested)
        elif is_tested and isinstance(node, ast.expr) and not isinstance(node, ast.Constant):
            found.append(node)
        else:
            for child in ast.iter_child_nodes(node):
                if not isinstance(child, ast.stmt):
                    visit(child, False)

    if isinstance(stmt, (ast.If, ast.While, ast.Assert)):
        visit(stmt.test, True)
    else:
        visit(stmt, False)
    return found


def _tensorish(ctx: Ctx, node: ast.expr) -> bool:
    """Whether the expression may be a tensor: it names a tensor of the failing frame (when
    the run reported tensor locals), or the run reported none."""
    known = ctx.error.locals if ctx.error is not None else {}
    tensors = {name for name, snap in known.items() if getattr(snap, "kind", None) == "tensor"}
    if not tensors:
        return True
    names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    return bool(names & tensors)


def check_classes_last(ctx: Ctx) -> list[Candidate]:
    """Cross-entropy given scores (N, T, C) with labels (N, T): it reads dimension 1 as the
    classes, so the scores' classes must move there (``.transpose(1, 2)``)."""
    if "Expected target size" not in ctx.message:
        return []
    failed = failed_op(ctx, *LABEL_LOSSES)
    scores, labels = operand(failed, "0", "input"), operand(failed, "1", "target")
    if scores is None or labels is None or len(scores.shape) < 3 or \
            labels.shape != scores.shape[:-1]:
        return []
    move = ".transpose(1, 2)" if len(scores.shape) == 3 else ".movedim(-1, 1)"
    line, arg = _call_arg(ctx, scores, failed.module or failed.op if failed else None)
    edit = fx.replace_node(ctx.code, arg, fx.postfix(arg, move)) if arg is not None else None
    name = scores.name or (text(arg) if arg is not None else None)
    return [Candidate("ce-classes-not-dim1", line, 0.85, [
        ("classes-last", {"fail_line": line, "name": name, "shape": str(tuple(scores.shape)),
                          "target_shape": str(tuple(labels.shape)), "count": scores.shape[-1]})],
        [Fix((edit,), runs_clean, T(
            f"put the classes in dimension 1 on line {line}: `{fx.postfix(arg, move)}`",
            f"第 {line} 行把类别放到第 1 维：`{fx.postfix(arg, move)}`"))]
        if edit is not None and arg is not None else [],
        {"line": line, "name": name, "detail": move, "shape": str(tuple(scores.shape)),
         "count": scores.shape[-1]})]


TUPLE_MODULES = ("LSTM", "GRU", "RNN", "MultiheadAttention")


def check_tuple_in_sequential(ctx: Ctx) -> list[Candidate]:
    """A layer of an ``nn.Sequential`` given a tuple: a layer before it returns one (an
    LSTM's ``(output, (h, c))``), and a Sequential passes it on whole. Torch rejects the
    tuple before any op runs, so the evidence is the module the failing line calls and the
    Sequential it was built as."""
    if "must be Tensor, not tuple" not in ctx.message:
        return []
    lines = {ctx.fail_line, *ctx.trace_lines()}
    called = [m.module for m in ctx.evidence.modules if m.line in lines]
    for name in called:
        chain = ctx.flow.constructor(name, "Sequential")
        layers = chain.args if chain is not None else []
        for layer in layers[:-1]:
            kind = call_name(layer) if isinstance(layer, ast.Call) else ""
            if kind in TUPLE_MODULES:
                ctx.refuted.add("not-a-tensor")  # the message's reading: this one says why
                return [Candidate("tuple-in-sequential", layer.lineno, 0.85, [
                    ("tuple-passed-on", {"line": layer.lineno, "module": kind,
                                         "fail_line": ctx.fail_line or 0})],
                    [], {"line": layer.lineno, "module": kind})]
    return []


def check_batchnorm_train(ctx: Ctx) -> list[Candidate]:
    if "Expected more than 1 value per channel when training" not in ctx.message:
        return []
    return [*_last_batch_of_one(ctx),
            *_eval_candidates(ctx, "batchnorm-single-sample", batchnorm=True)]


def _last_batch_of_one(ctx: Ctx) -> list[Candidate]:
    """The batch of one comes in a training step (a line of the traceback is in a loop that
    calls backward()), from a DataLoader: its last batch holds what is left of the data.
    ``drop_last=True`` there; the trial shows whether that was it. ``eval()`` would be wrong
    here: the model is being trained."""
    frames = [ctx.fail_line or 0, *ctx.trace_lines()]
    training = next((line for line in frames if (stmt := ctx.flow.statement_at(line)) is not None
                     and any(any(call_name(n) == "backward" for n in ast.walk(loop))
                             for loop in ctx.flow.loops_of(stmt))), None)
    if training is None:
        return []
    out = []
    for call in ctx.flow.calls_named("DataLoader"):
        if any(k.arg == "drop_last" for k in call.keywords) or not call.args:
            continue
        new = ast.Call(call.func, call.args, [*call.keywords, ast.keyword(
            "drop_last", ast.Constant(True))])
        fix = fx.node_fix(ctx.code, call, ast.unparse(new), runs_clean, T(
            f"drop the last, incomplete batch: `drop_last=True` in the DataLoader on line "
            f"{call.lineno}",
            f"丢掉最后那个不完整的批量：第 {call.lineno} 行的 DataLoader 加上 `drop_last=True`"))
        fill: dict[str, object] = {"line": call.lineno, "fail_line": training}
        out.append(Candidate("batchnorm-single-sample", call.lineno, 0.85, [
            ("last-batch-of-one", fill)], [fix] if fix is not None else [], fill))
    return out


EXCEPTION_CHECKS: tuple[Check, ...] = (check_linear_shape, check_view_shape, check_batch,
                                       check_conv_channels, check_dtype, check_ce_target,
                                       check_bool, check_batchnorm_train, check_embedding_indices,
                                       check_embedding_range, check_classes_last,
                                       check_tuple_in_sequential)
SILENT_CHECKS: tuple[Check, ...] = ()

"""Shape provenance: for an error raised by a check of shapes (a loss's input against its
labels, a layer's input against its sizes, two tensors joined or combined element by
element), which operand is wrong, in which dimension, and the line that gave it that shape.

The instrumented re-run recorded every op of the learner's code with its output shape and
the op that made its input (:mod:`tutor.diagnosis.lineage`). The failing op's operands and
the module's sizes say what was needed; each operand's lineage says where the offending
dimension came from: an index that kept one sample of the batch, a flatten or a join across
the batch, a sample made without its batch dimension, an element of a model's output taken
for another, two tensors whose sizes parted on the way from a common ancestor. That line is
the root cause, named with the chain of shapes that leads there; a fix that follows from the
evidence is built as a patch and tried before it is shown.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import Edit, Fix, postfix, replace_node, suffix_value
from tutor.diagnosis.flow import call_name, module_label, text
from tutor.diagnosis.lineage import (
    INDEXES,
    JOINS,
    MERGES,
    REDUCTIONS,
    SQUEEZES,
    Lineage,
    Step,
    shape_text,
)
from tutor.diagnosis.operand_checks import _int_arg, failed_op
from tutor.diagnosis.verify import runs_clean
from tutor.i18n import T
from tutor.sandbox.models import FailedOpEvidence, OperandEvidence

Steps = list[tuple[str, dict[str, object]]]

LOSSES = frozenset({"cross_entropy", "nll_loss", "mse_loss", "l1_loss", "smooth_l1_loss",
                    "huber_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits",
                    "kl_div", "multi_margin_loss", "soft_margin_loss", "poisson_nll_loss"})
LABEL_LOSSES = frozenset({"cross_entropy", "nll_loss", "multi_margin_loss"})
ELEMENTWISE = frozenset({"add", "sub", "mul", "div", "__add__", "__sub__", "__mul__",
                         "__truediv__", "__radd__", "__rsub__", "__rmul__", "__rtruediv__",
                         "__iadd__", "__isub__", "__imul__", "__itruediv__", "add_", "sub_",
                         "mul_", "div_", "where", "maximum", "minimum", "pow", "__pow__"})
SIZE_MESSAGES = re.compile(
    r"For 1D input, 1D target must have size 1|Expected input batch_size|"
    r"must match the size of tensor b|Target size \(|Using a target size|"
    r"mat1 and mat2 shapes cannot be multiplied|Sizes of tensors must match|"
    r"stack expects each tensor to be equal size|expected \d+D input|expected \dD or \dD input|"
    r"Expected \d+D \(unbatched\) or \d+D \(batched\) input")
BROADCAST = re.compile(r"The size of tensor a \((\d+)\) must match the size of tensor b "
                       r"\((\d+)\) at non-singleton dimension (\d+)")
JOIN_SIZES = re.compile(r"Sizes of tensors must match except in dimension (\d+)\. Expected size "
                        r"(\d+) but got size (\d+) for tensor number (\d+)|stack expects each "
                        r"tensor to be equal size")
MATMUL = re.compile(r"mat1 and mat2 shapes cannot be multiplied \((\d+)x(\d+) and (\d+)x(\d+)\)")
RANK = re.compile(r"expected (\d)D input \(got (\d)D input\)|expected (\d)D or (\d)D input "
                  r"\(got (\d)D input\)")
RNN_INPUT = re.compile(r"input\.size\(-1\) must be equal to input_size\. Expected (\d+), got "
                       r"(\d+)|For unbatched 2-D input, hx (?:and cx )?should also be 2-D")
RNN_KINDS = frozenset({"LSTM", "GRU", "RNN"})
SHAPE_OPS = INDEXES | MERGES | JOINS | REDUCTIONS | SQUEEZES
MODULE_NAMES = frozenset({"torch", "th", "F", "nn", "functional", "np"})
"""What a function call's owner is when it is a module, not a tensor (``torch.flatten``)."""


def _tensors(failed: FailedOpEvidence) -> list[OperandEvidence]:
    """The operands that are data, not a layer's own weight or bias (made by ``nn.init``
    or by a parameter's constructor, which the history records as an in-place init)."""
    return [o for o in failed.inputs if not (o.requires_grad and o.grad_fn is None and (
        o.op is None or o.op.endswith("_")))]


def _shape_failure(ctx: Ctx) -> FailedOpEvidence | None:
    failed = failed_op(ctx)
    if failed is None or not SIZE_MESSAGES.search(ctx.message):
        return None
    return failed


def _said(name: str | None) -> str | None:
    """The learner's name for a value, where the run gave one a program can have."""
    return name if name and re.fullmatch(r"[A-Za-z_][\w.]*", name) else None


# -- 1. the batch dimension taken away ------------------------------------------------------
def check_batch_lost(ctx: Ctx) -> list[Candidate]:
    """An operand lost the batch on the way: its lineage had the samples in dimension 0 (the
    size the other operand, the labels or the data still have) and an op took them away.
    The root is that op: an index that kept one sample, a flatten or a view that ran the
    samples together, a join along them, a squeeze of a batch of one."""
    failed = _shape_failure(ctx)
    if failed is None:
        return []
    found: list[Candidate] = []
    for operand, batch, why in _batch_suspects(ctx, failed):
        lineage = Lineage(operand)
        lost = lineage.lost(batch)
        if not lost or lost[0].op not in SHAPE_OPS:
            continue
        if lost[0].op in ("view", "reshape") and "Expected input batch_size" in ctx.message:
            continue  # operand_checks.check_batch reads a loss's reshaped scores
        if lost[0].op in JOINS and not _joins_features(lineage, lost[0]):
            continue  # whole batches of data joined into a bigger one: a batch, not a merge
        if lost[0].op in SQUEEZES and lineage.data_batch() not in (None, batch):
            continue  # a batch of one the data never was (an RNN state's layers dimension)
        cand = _lost_candidate(ctx, failed, operand, batch, lost, why)
        if cand is not None:
            found.append(cand)
    return found[:1]


def _reduced_away(operand: OperandEvidence, size: int) -> bool:
    """The first op that lost ``size`` from the operand's dimension 0 was a reduction."""
    lost = Lineage(operand).lost(size)
    return bool(lost) and lost[0].op in REDUCTIONS


def _batch_suspects(ctx: Ctx, failed: FailedOpEvidence
                    ) -> Iterator[tuple[OperandEvidence, int, tuple[str, dict[str, object]]]]:
    """(operand, the batch it should carry, the step that says what the op needed)."""
    fail = ctx.fail_line or failed.line
    data = _tensors(failed)
    if failed.op in LOSSES and len(data) >= 2:
        scores, labels = data[0], data[1]
        for mine, other in ((scores, labels), (labels, scores)):
            if other.shape and len(other.shape) <= 2:
                key = "batch-wanted-loss" if mine is scores else "batch-wanted-target"
                yield mine, other.shape[0], (key, {
                    "fail_line": fail, "count": other.shape[0], "name": _said(mine.name),
                    "shape": shape_text(mine.shape), "target": _said(other.name),
                    "target_shape": shape_text(other.shape)})
            elif len(other.shape) > 2 and len(mine.shape) > 2 and mine.shape[0] != \
                    other.shape[0]:
                # a reconstruction against its images: the images' dimension 0 is the batch
                yield mine, other.shape[0], ("batch-wanted-other", {
                    "fail_line": fail, "name": _said(mine.name),
                    "shape": shape_text(mine.shape), "target": _said(other.name),
                    "target_shape": shape_text(other.shape), "count": other.shape[0]})
        return
    m = MATMUL.search(ctx.message)
    if m and data:
        given = data[0]
        batch = Lineage(given).data_batch()
        got, wanted = int(m.group(2)), int(m.group(3))
        if batch is not None and batch > 1:
            yield given, batch, ("batch-wanted-features", {
                "fail_line": fail, "numel": wanted, "name": _said(given.name),
                "shape": shape_text(given.shape), "count": batch, "high": got})
        return
    if (BROADCAST.search(ctx.message) or JOIN_SIZES.search(ctx.message)) and len(data) >= 2:
        for mine in data:
            for other in data:
                # a 1-D other (labels, the targets an accuracy compares with) counts where
                # mine lost a dimension of its size to a reduction (max over the batch)
                if other is not mine and (len(other.shape) >= 2 or (
                        len(other.shape) == 1 and other.shape[0] > 1
                        and _reduced_away(mine, other.shape[0]))):
                    yield mine, other.shape[0], ("batch-wanted-other", {
                        "fail_line": fail, "name": _said(mine.name),
                        "shape": shape_text(mine.shape), "target": _said(other.name),
                        "target_shape": shape_text(other.shape), "count": other.shape[0]})
                    break
        return
    if RANK.search(ctx.message) and data:
        batch = Lineage(data[0]).data_batch()
        if batch is not None:
            yield data[0], batch, ("rank-wanted", {
                "fail_line": fail, "name": _said(data[0].name),
                "shape": shape_text(data[0].shape), "module": _layer_name(failed)})


def _joins_features(lineage: Lineage, step: Step) -> bool:
    """A join along dimension 0 that ran per-sample features together (vectors a layer
    made, one a sample), not one that made a bigger batch of data (images of real and
    generated samples, two mini-batches)."""
    at = lineage.steps.index(step)
    made = lineage.steps[at - 1] if at else None
    return len(step.before or []) <= 2 and bool(
        step.link.module or (made is not None and made.link.module))


def _layer_name(failed: FailedOpEvidence) -> str | None:
    return module_label(failed.module) if failed.module else None


def _lost_candidate(ctx: Ctx, failed: FailedOpEvidence, operand: OperandEvidence, batch: int,
                    lost: list[Step], why: tuple[str, dict[str, object]]) -> Candidate | None:
    first = lost[0]
    steps: Steps = [why]
    changes: list[tuple[Edit, str]] = []
    root = first.line
    for step in lost:
        site = _site(ctx, step)
        if step is first:
            root = site.lineno if site is not None else step.line
        steps.append(_lost_step(step, site, batch))
        change = _keep_batch_edit(ctx, step, site)
        if change is None:
            changes = []
            break
        changes.append(change)
    kind = "index-drops-batch" if first.op in INDEXES else (
        "squeeze-drops-batch" if first.op in SQUEEZES else "batch-merged")
    given_at = _configured_at(ctx, first, _site(ctx, first))
    if given_at is not None:
        # the op is a module of the program that reshapes to what it was built with
        # (``View((-1, 128 * 2 * 2))``): the size is written where it is built
        root = given_at.lineno
        steps.append(("shape-configured", {"line": given_at.lineno, "expr": text(given_at),
                                           "module": first.link.layer_kind}))
    fixes: list[Fix] = []
    if changes and len({e.line for e, _ in changes}) == len(changes):
        en = " and ".join(f"`{new}` on line {e.line}" for e, new in changes)
        zh = "，".join(f"第 {e.line} 行改为 `{new}`" for e, new in changes)
        fixes.append(Fix(tuple(e for e, _ in changes), runs_clean, T(
            f"keep the samples in dimension 0: {en}", f"让样本留在第 0 维：{zh}")))
    if kind == "index-drops-batch":
        site = _site(ctx, first)
        others = [f for f in (_index_next_dim(ctx, first), _keep_one_edit(ctx, first))
                  if f is not None]
        # an index on a model's output (``model(x)[0]``) meant no index; one on the data
        # (``x[0]``) meant one sample, kept as a batch of one: tried first
        on_output = isinstance(site, ast.Subscript) and isinstance(site.value, ast.Call)
        walked = isinstance(site, ast.Subscript) and not on_output and not isinstance(
            site.slice, (ast.Constant, ast.UnaryOp))  # ``x[t]`` in a loop: no index is no fix
        fixes = fixes + others if on_output else others + ([] if walked else fixes)
    expr = _expr(ctx, first)
    label = first.arg_parts()[0] if first.arg_parts() else None
    fill: dict[str, object] = {
        "line": root, "fail_line": ctx.fail_line or failed.line, "count": batch,
        "shape": shape_text(first.before or []), "target_shape": shape_text(first.shape),
        "expr": expr, "label": label if first.op in INDEXES else None,
        "name": _said(operand.name), "op": first.op,
    }
    # a loss's labels say the batch; or the row holds the batch's samples side by side
    sure = why[0] in ("batch-wanted-loss", "batch-wanted-target") or why[1].get(
        "high") == batch * int(str(why[1].get("numel") or 0))
    if kind == "index-drops-batch" and walked and why[0] not in (
            "batch-wanted-loss", "batch-wanted-target", "batch-wanted-other"):
        # ``x[t]`` for every t of a loop walks dimension 0 (the time steps of a
        # sequence-first tensor): only another tensor whose dimension 0 counts the batch
        # (labels, a state built for it) makes it samples, not the layout assumed
        return None
    if given_at is not None:
        fixes = []  # a change inside the module would change each of its uses, not this size
        fill["expr"] = text(given_at)
    return Candidate(kind, root, 0.85 if sure else 0.8, steps, fixes, fill, pinned=True)


def _configured_at(ctx: Ctx, step: Step, site: ast.expr | None) -> ast.Call | None:
    """Where the program builds its own module whose forward ran ``step`` with a size it
    keeps (``tensor.view(self.size)``): the constructor call that gave it that size."""
    layer, kind = step.link.layer, step.link.layer_kind
    if site is None or not layer or not kind or not _learner_class(ctx, kind) or not any(
            isinstance(n, ast.Attribute) and text(n.value) == "self" for n in ast.walk(site)):
        return None
    built = ctx.flow.constructor(layer, kind)  # a Sequential of the program's own scope
    if built is None or call_name(built) != kind:
        built = _constructor(ctx, layer, kind)  # an attribute of the model called
    return built if built is not None and built.args else None


def _lost_step(step: Step, site: ast.AST | None, batch: int) -> tuple[str, dict[str, object]]:
    values: dict[str, object] = {
        "line": site.lineno if isinstance(site, (ast.expr, ast.stmt)) else step.line,
        "shape": shape_text(step.before or []), "target_shape": shape_text(step.shape),
        "count": batch, "expr": text(site) if isinstance(site, ast.expr) else None,
        "op": step.op, "dim": step.dim_arg(),
        "label": step.arg_parts()[0] if step.op in INDEXES and step.arg_parts() else None,
    }
    if step.op in INDEXES:
        return "lost-by-index", values
    if step.op in JOINS:
        return "lost-by-join", values
    if step.op in SQUEEZES:
        return "lost-by-squeeze", values
    if step.op in REDUCTIONS:
        return "lost-by-reduction", values
    return "lost-by-merge", values


def _site(ctx: Ctx, step: Step) -> ast.expr | None:
    """Where the learner's code did what an op of the lineage did: the expression on its
    line, or the constructor of the torch layer whose forward ran it (``nn.Flatten(0)``)."""
    layer = step.link.layer_kind
    if layer and step.link.layer and not _learner_class(ctx, layer):
        return _constructor(ctx, step.link.layer, layer)
    return step.node(ctx.flow)


def _learner_class(ctx: Ctx, name: str) -> bool:
    return any(isinstance(n, ast.ClassDef) and n.name == name for n in ast.walk(ctx.flow.tree))


def _constructor(ctx: Ctx, path: str, kind: str) -> ast.Call | None:
    """The call that built the layer the evidence names by its path: where the program
    assigns it, else the only ``kind(...)`` in the program."""
    found = ctx.flow.constructor(path.split(".", 1)[-1], kind)
    if found is not None and call_name(found) == kind:
        return found
    built = [c for c in ctx.flow.calls if call_name(c) == kind]
    return built[0] if len(built) == 1 else None


def _expr(ctx: Ctx, step: Step) -> str | None:
    site = _site(ctx, step)
    return text(site) if site is not None else None


def _keep_batch_edit(ctx: Ctx, step: Step, site: ast.expr | None) -> tuple[Edit, str] | None:
    """The change that keeps the samples apart where the step ran them together, and the
    new expression: no index on a value that already is the whole batch, ``flatten(1)`` for
    a flatten from dimension 0, ``dim=1`` for a join along dimension 0, a squeeze of the
    other size-1 dimensions."""
    new = _kept(site, step.before or []) if site is not None else None
    edit = replace_node(ctx.code, site, new) if site is not None and new is not None else None
    return (edit, new) if edit is not None and new is not None else None


def _kept(site: ast.expr, before: list[int]) -> str | None:
    if isinstance(site, ast.Subscript):
        return text(site.value)
    if not isinstance(site, ast.Call):
        return None
    name = call_name(site)
    if name == "Flatten":
        return _call_with(site, 0, "start_dim", None)
    tensor, method = _called_on(site)
    if name == "flatten":
        return _call_with(site, 0 if method else 1, "start_dim", "1")
    if name in JOINS - {"hstack", "vstack"}:
        return _call_with(site, 1, "dim", "1")
    if tensor is None:
        return None
    if name in REDUCTIONS and _call_dim(site) == 0 and len(before) >= 2:
        # over the steps or tokens of each sample (N, T, F), over the classes of each sample
        # where it picks one (a max or argmax of scores (N, C)), or not at all (a sum (N, F))
        picks = name in ("max", "min", "argmax", "amax", "amin")
        return _call_with(site, 0 if method else 1, "dim", "1") if len(before) >= 3 or picks \
            else tensor
    if name in ("view", "reshape") and len(before) >= 2:
        return f"{tensor}.{name}({tensor}.size(0), -1)"
    if name == "squeeze":
        ones = [str(d) for d, size in enumerate(before) if size == 1 and d != 0]
        dims = ones[0] if len(ones) == 1 else f"({', '.join(ones)})"
        if not ones:
            return tensor
        return f"{tensor}.squeeze({dims})" if method else f"{text(site.func)}({tensor}, {dims})"
    return None


def _call_dim(call: ast.Call) -> int | None:
    """The dimension a reduction was given (``dim=0`` or its first argument)."""
    given = next((k.value for k in call.keywords if k.arg == "dim"), None)
    method = _called_on(call)[1]
    if given is None:
        positional = call.args if method else call.args[1:]
        given = positional[0] if positional else None
    return given.value if isinstance(given, ast.Constant) and isinstance(
        given.value, int) and not isinstance(given.value, bool) else None


def _called_on(call: ast.Call) -> tuple[str | None, bool]:
    """The tensor a call works on, and whether it is a method call (``x.squeeze()``) rather
    than a function given the tensor first (``torch.squeeze(x)``)."""
    func = call.func
    owner = func.value if isinstance(func, ast.Attribute) else None
    if owner is not None and not (isinstance(owner, (ast.Name, ast.Attribute)) and text(
            owner).split(".")[0] in MODULE_NAMES):
        return text(owner), True
    return (text(call.args[0]) if call.args else None), False


def _index_next_dim(ctx: Ctx, step: Step) -> Fix | None:
    """``out[:, -1]`` for ``out[-1]`` of a (batch, steps, ...) tensor: the index meant the
    steps (the last one), and reached the samples (a batch_first layout read as steps
    first). Only for a constant index: a loop's index walks whatever it was written for."""
    site = _site(ctx, step)
    if not isinstance(site, ast.Subscript) or not step.before or len(step.before) < 3:
        return None
    parts = list(site.slice.elts) if isinstance(site.slice, ast.Tuple) else [site.slice]
    first = parts[0]
    constant = first.operand if isinstance(first, ast.UnaryOp) else first
    if not isinstance(constant, ast.Constant) or not isinstance(constant.value, int):
        return None
    rest = [text(p) for p in parts[1:]]
    if rest and rest[0] == ":":
        rest = rest[1:]
    new = f"{text(site.value)}[{', '.join([':', text(first), *rest])}]"
    edit = replace_node(ctx.code, site, new)
    return Fix((edit,), runs_clean, T(
        f"index the steps (dimension 1), not the samples, on line {step.line}: `{new}`",
        f"第 {step.line} 行对时间步（第 1 维）而不是样本做索引：`{new}`")) if edit else None


def _keep_one_edit(ctx: Ctx, step: Step) -> Fix | None:
    """``x[k:k + 1]`` for ``x[k]``: one sample kept as a batch of one (where one sample was
    meant and the rest of the program works on batches)."""
    site = _site(ctx, step)
    index = site.slice if isinstance(site, ast.Subscript) else None
    if not isinstance(index, ast.Constant) or not isinstance(index.value, int):
        return None
    new = f"{index.value}:{index.value + 1}"
    edit = replace_node(ctx.code, index, new)
    return Fix((edit,), runs_clean, T(
        f"keep one sample as a batch of one on line {step.line}: `[{new}]`",
        f"第 {step.line} 行把一个样本保留为大小为 1 的批：`[{new}]`")) if edit else None


def _call_with(call: ast.Call, position: int, keyword: str, value: str | None) -> str:
    """The call's source with one argument set (given by position or keyword), or removed
    where ``value`` is None."""
    args = [text(a) for a in call.args]
    keywords = [(k.arg, text(k.value)) for k in call.keywords]
    named = next((i for i, (k, _) in enumerate(keywords) if k == keyword), None)
    if named is not None:
        if value is None:
            del keywords[named]
        else:
            keywords[named] = (keyword, value)
    elif position < len(args):
        if value is None:
            if position == len(args) - 1:
                del args[position]
            else:
                args[position] = "0"  # keep the later positions; not expected here
        else:
            args[position] = value
    elif value is not None and position == len(args) and not keywords:
        args.append(value)  # the next positional argument: as a learner writes it
    elif value is not None:
        keywords.append((keyword, value))
    parts = args + [f"**{v}" if k is None else f"{k}={v}" for k, v in keywords]
    return f"{text(call.func)}({', '.join(parts)})"


def check_sliced_one_side(ctx: Ctx) -> list[Candidate]:
    """A mini-batch was sliced from the data on one side only: one operand's lineage holds
    ``images[i:i + 8]`` (8 of the 32 samples), the other still has all 32 (the labels, the
    targets). Slice the other the same way where it is used."""
    failed = _shape_failure(ctx)
    if failed is None:
        return []
    data = _tensors(failed)
    fail = ctx.fail_line or failed.line
    for sliced in data:
        for whole in data:
            if whole is sliced or not sliced.shape or not whole.shape or \
                    sliced.shape[0] == whole.shape[0] or any(
                        s.slices_dim0() for s in Lineage(whole).steps):
                continue
            step = next((s for s in reversed(Lineage(sliced).steps) if s.slices_dim0()
                         and s.before and s.before[0] == whole.shape[0]
                         and s.shape[:1] == sliced.shape[:1]), None)
            site = _site(ctx, step) if step is not None else None
            if step is None or not isinstance(site, ast.Subscript):
                continue
            arg = _argument(ctx, fail, whole, failed) if whole.name else None
            taken = f"{text(arg)}[{text(site.slice)}]" if arg is not None else None
            edit = replace_node(ctx.code, arg, taken) if arg is not None and taken else None
            fixes = [Fix((edit,), runs_clean, T(
                f"slice `{text(arg)}` the same way on line {fail}: `{taken}`",
                f"第 {fail} 行以同样的方式切片 `{text(arg)}`：`{taken}`"))] \
                if edit is not None and arg is not None else []
            values: dict[str, object] = {
                "line": fail, "fail_line": fail, "name": _said(sliced.name),
                "target": _said(whole.name), "expr": text(site), "count": sliced.shape[0],
                "numel": whole.shape[0], "given": step.line}
            return [Candidate("batch-sliced-one-side", fail, 0.85, [
                ("sliced-here", {**values, "line": site.lineno}),
                ("not-sliced", values)], fixes, values, pinned=True)]
    return []


# -- 2. a dimension missing, or one too many, where the tensor was made ----------------------
RANK_LIMIT = re.compile(r"Expected (\d)D \(unbatched\) or (\d)D \(batched\) input to (\w+)|"
                        r"(\w+): Expected input to be (\d)D or (\d)D, got (\d)D")
SHAPE_WORDS = re.compile(r"shape|size|dimension|elements|\d-?D\b|channels", re.IGNORECASE)


def check_missing_dim(ctx: Ctx) -> list[Candidate]:
    """A layer refused its input's dimensions and the learner's code made the tensor that
    way (no op of its lineage took the dimension away): one sample without its batch
    dimension (the first layer ran it as one unbatched sample, a later one refused it), a
    sequence of numbers without its feature axis, a batch given one dimension more, a
    recurrent layer built for another number of features."""
    failed = failed_op(ctx)
    if failed is None or not failed.inputs or not SHAPE_WORDS.search(ctx.message):
        return []
    given = failed.inputs[0]
    kind = failed.module_kind or ""
    if kind in RNN_KINDS and RNN_INPUT.search(ctx.message):
        return _rnn_input(ctx, failed, given)
    limit = RANK_LIMIT.search(ctx.message)
    if limit is not None:
        most = int(limit.group(2) or limit.group(6))
        extra = _extra_dim(ctx, failed, given, most)
        if extra is not None:
            return [extra]
    for operand in _tensors(failed):
        found = _missing_batch(ctx, failed, operand)
        if found is not None:
            return [found]
    return []


def _rnn_input(ctx: Ctx, failed: FailedOpEvidence, given: OperandEvidence) -> list[Candidate]:
    config = failed.config
    size = config.get("input_size")
    first = config.get("batch_first") is True
    shape = given.shape
    if not isinstance(size, int) or isinstance(size, bool) or not shape:
        return []
    if len(shape) == 3 and shape[-1] != size:
        return _rnn_size(ctx, failed, given, size)
    if len(shape) != 2:
        return []
    line = failed.line
    layer = _layer_name(failed)
    arg = _argument(ctx, line, given, failed)
    lineage = Lineage(given)
    made = lineage.steps[-1] if lineage.steps else None
    head: tuple[str, dict[str, object]] = ("rnn-wants", {
        "fail_line": line, "module": layer, "numel": size, "name": _said(given.name),
        "shape": shape_text(shape),
        "target": "(batch, steps, features)" if first else "(steps, batch, features)"})
    steps: Steps = [head]
    if made is not None:
        steps.append(("made-shape", {"line": made.line, "name": _said(given.name),
                                     "shape": shape_text(made.shape), "op": made.op}))
    if size == 1 and shape[-1] != 1:
        new, cid, dim = ".unsqueeze(-1)", "missing-feature-dim", -1
    elif shape[-1] == size:
        new, cid, dim = (".unsqueeze(0)" if first else ".unsqueeze(1)"), "missing-batch-dim", 0
    else:
        return []
    edit = replace_node(ctx.code, arg, postfix(arg, new)) if arg is not None else None
    fixes = [Fix((edit,), runs_clean, T(
        f"give `{layer}` the dimension it wants on line {line}: `{postfix(arg, new)}`",
        f"第 {line} 行补上 `{layer}` 需要的维度：`{postfix(arg, new)}`"))] if edit and arg \
        is not None and layer else []
    return [Candidate(cid, line, 0.85, steps, fixes, {
        "line": line, "module": layer, "name": _said(given.name), "shape": shape_text(shape),
        "numel": size, "dim": dim, "expr": new.lstrip(".")}, pinned=True)]


def _rnn_size(ctx: Ctx, failed: FailedOpEvidence, given: OperandEvidence, size: int
              ) -> list[Candidate]:
    """A recurrent layer built for ``size`` features per step, given a batch whose features
    per step another layer (an embedding, an encoder) made: the size written into the
    layer is the one to change."""
    got = given.shape[-1]
    origin = Lineage(given).origin(-1, got)
    kind = failed.module_kind or ""
    call = _constructor(ctx, failed.module or "", kind) if failed.module else None
    if origin is None or call is None or got in given.shape[:-1]:
        return []  # a layout question (features not last), not a size written in the layer
    arg = _int_arg(call, 0, "input_size")
    line = (arg or call).lineno
    layer = _layer_name(failed)
    edit = replace_node(ctx.code, arg, str(got)) if arg is not None else None
    fixes = [Fix((edit,), runs_clean, T(
        f"build `{layer}` for {got} input features per step on line {line}",
        f"在第 {line} 行让 `{layer}` 每步接收 {got} 个输入特征"))] if edit and layer else []
    where = origin.link.layer or origin.link.module
    steps: Steps = [
        ("size-from", {"name": _said(given.name), "shape": shape_text(given.shape),
                       "count": got, "line": origin.line, "op": origin.op,
                       "module": module_label(where) if where else None}),
        ("layer-built-for", {"line": line, "module": layer, "numel": size}),
    ]
    return [Candidate("rnn-input-size", line, 0.8, steps, fixes, {
        "line": line, "module": layer, "numel": size, "count": got,
        "name": _said(given.name), "shape": shape_text(given.shape)}, pinned=True)]


def _extra_dim(ctx: Ctx, failed: FailedOpEvidence, given: OperandEvidence, most: int
               ) -> Candidate | None:
    """The layer takes at most ``most`` dimensions and got one more, which an op of the
    lineage added to a tensor that already had ``most`` (``stack(...)`` then
    ``unsqueeze(0)``): that op is the root; without it the batch is the one it had."""
    if len(given.shape) != most + 1:
        return None
    lineage = Lineage(given)
    step = next((s for s in reversed(lineage.steps) if s.before is not None
                 and len(s.before) == most and len(s.shape) == most + 1
                 and s.op in ("unsqueeze", "__getitem__", "view", "reshape")), None)
    site = _site(ctx, step) if step is not None else None
    if step is None or site is None:
        return None
    tensor, method = _called_on(site) if isinstance(site, ast.Call) else (
        text(site.value) if isinstance(site, ast.Subscript) else None, True)
    edit = replace_node(ctx.code, site, tensor) if tensor is not None and method else None
    layer = _layer_name(failed)
    fixes = [Fix((edit,), runs_clean, T(
        f"drop the extra dimension on line {step.line}: `{tensor}`",
        f"第 {step.line} 行去掉多余的维度：`{tensor}`"))] if edit is not None else []
    return Candidate("extra-batch-dim", site.lineno, 0.85, [
        ("rank-too-many", {"fail_line": failed.line, "module": layer,
                           "shape": shape_text(given.shape), "numel": most}),
        ("dim-added", {"line": site.lineno, "expr": text(site),
                       "shape": shape_text(step.before or []),
                       "target_shape": shape_text(step.shape)})],
        fixes, {"line": site.lineno, "expr": text(site), "module": layer, "numel": most,
                "shape": shape_text(step.before or []), "target_shape": shape_text(step.shape)},
        pinned=True)


def _argument(ctx: Ctx, line: int, given: OperandEvidence, failed: FailedOpEvidence
              ) -> ast.expr | None:
    """The argument on the line that is the operand: by its name, else the first argument of
    the call of the failing layer."""
    stmt = ctx.flow.statement_at(line)
    calls = [n for n in ast.walk(stmt) if isinstance(n, ast.Call)] if stmt is not None else []
    if given.name:
        named = [a for c in calls for arg in c.args for a in (
            arg.elts if isinstance(arg, (ast.Tuple, ast.List)) else [arg])
            if text(a) == given.name]
        if len(named) == 1:
            return named[0]
    last = (failed.module or "").split(".")[-1]
    hits = [c.args[0] for c in calls if c.args and text(c.func).split(".")[-1] == last]
    return hits[0] if len(hits) == 1 else None


def _missing_batch(ctx: Ctx, failed: FailedOpEvidence, given: OperandEvidence
                   ) -> Candidate | None:
    """The data went into the model as one sample: the first layer of the lineage ran it
    as an unbatched input (a 3-D image into a 2-D convolution), or the layer that refused
    it wants one dimension more and nothing on the way took one away. The root is where
    that tensor was made (or handed to the model), and a batch of one is made there."""
    lineage = Lineage(given)
    entry = lineage.entry()
    if entry is None or entry.before is None:
        return None
    unbatched = lineage.entered_unbatched()
    rank = RANK.search(ctx.message)
    wanted = int(rank.group(1) or rank.group(3)) if rank is not None else None
    shaped = failed.op == "forward" and wanted is not None and (
        len(given.shape) == wanted - 1 == len(entry.before))
    if not (unbatched or shaped):
        return None
    after = lineage.steps[lineage.steps.index(entry):]
    if not unbatched and any(s.op in SHAPE_OPS and not s.slices_dim0() and len(s.shape) < len(
            s.before or []) for s in after):
        return None  # an op on the way dropped a dimension: another story (check_batch_lost)
    arg = _entry_argument(ctx, entry)
    if arg is None:
        return None
    fixes: list[Fix] = []
    root = entry.line
    name = arg.id if isinstance(arg, ast.Name) else text(arg)
    made = _samples_made(ctx, arg, entry.line)
    edits = [suffix_value(ctx.code, stmt, ".unsqueeze(0)") for stmt, _ in made]
    if made and all(edits):
        root, name = made[0][0].lineno, made[0][1]
        names = ", ".join(f"`{bound}`" for _, bound in made)
        lines = " and ".join(str(stmt.lineno) for stmt, _ in made)
        many = len(made) > 1
        fixes.append(Fix(tuple(e for e in edits if e is not None), runs_clean, T(
            f"add the batch dimension where {names} {'are' if many else 'is'} made "
            f"(line{'s' if many else ''} {lines}): `.unsqueeze(0)`",
            f"在创建 {names} 的第 {'、'.join(str(stmt.lineno) for stmt, _ in made)} 行加上批维："
            "`.unsqueeze(0)`")))
    layer = _layer_name(failed)
    steps: Steps = [("rank-wanted" if shaped else "refused-later", {
        "fail_line": failed.line, "module": layer, "name": _said(given.name),
        "shape": shape_text(given.shape)})]
    steps.append(("entered-unbatched", {"line": entry.line, "name": name, "op": entry.op,
                                        "shape": shape_text(entry.before)}))
    return Candidate("missing-batch-dim", root, 0.85 if shaped else 0.8, steps, fixes, {
        "line": root, "fail_line": failed.line, "module": layer, "name": name,
        "shape": shape_text(entry.before), "op": entry.op}, pinned=True)


def _samples_made(ctx: Ctx, arg: ast.expr, line: int) -> list[tuple[ast.stmt, str]]:
    """The assignments that made the value ``arg`` names on ``line`` (with the name each
    binds): its own last assignment, or, for a parameter of the function that holds the
    line, the assignment of what each call of that function gives it."""
    if not isinstance(arg, ast.Name):
        return []
    function = ctx.flow.function_at(line)
    given = ctx.flow.arguments_for(function, arg.id) if function is not None else []
    sources = [(g.id, call.lineno) for call, g in given if isinstance(g, ast.Name)]
    if not given or len(sources) != len(given):
        sources = [(arg.id, line)]
    if not given and function is not None and function.name == "forward":
        # a forward called through the module (``Net().eval()(image)``): the value the
        # run saw the module called with, on the learner's line that called it
        sources = _module_called_with(ctx, line) or sources
    found: list[tuple[ast.stmt, str]] = []
    for name, at in sources:
        stmt = ctx.flow.assigned_before(name, at)
        bound: ast.expr | None = None
        if isinstance(stmt, ast.AnnAssign):
            bound = stmt.target
        elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            bound = stmt.targets[0]
        if stmt is None or bound is None:
            return []
        if not isinstance(bound, ast.Name):
            return []
        if all(s is not stmt for s, _ in found):
            found.append((stmt, bound.id))
    return found


def _module_called_with(ctx: Ctx, line: int) -> list[tuple[str, int]]:
    """(the name given, the line) where the module whose forward holds ``line`` was called
    by the learner's code outside it, when that call took one name."""
    trace = set(ctx.trace_lines())
    calls = [m.line for m in ctx.evidence.modules if m.line in trace and m.line != line]
    stmt = ctx.flow.statement_at(calls[0]) if calls else None
    if stmt is None:
        return []
    names = [c.args[0] for c in ast.walk(stmt) if isinstance(c, ast.Call) and len(c.args) == 1
             and isinstance(c.args[0], ast.Name)]
    return [(names[0].id, calls[0])] if len(names) == 1 else []


def _entry_argument(ctx: Ctx, entry: Step) -> ast.expr | None:
    """The learner's value that went into the first layer on the entry line: the one name
    its calls are given (``self.conv1(x)`` inside a forward, ``net.encode(low_cont)``)."""
    stmt = ctx.flow.statement_at(entry.line)
    if stmt is None:
        return None
    names = [a for n in ast.walk(stmt) if isinstance(n, ast.Call) for a in n.args
             if isinstance(a, ast.Name)]
    distinct = {a.id for a in names}
    return names[0] if len(distinct) == 1 else None


EXCEPTION_CHECKS: tuple[Check, ...] = (check_batch_lost, check_sliced_one_side, check_missing_dim)
SILENT_CHECKS: tuple[Check, ...] = ()

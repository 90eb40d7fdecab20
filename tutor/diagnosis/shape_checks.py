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

from tutor.diagnosis.candidate import Candidate, Ctx
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
from tutor.diagnosis.operand_checks import failed_op
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
    r"stack expects each tensor to be equal size|expected \d+D input|"
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
        cand = _lost_candidate(ctx, failed, operand, batch, lost, why)
        if cand is not None:
            found.append(cand)
    return found[:1]


def _batch_suspects(ctx: Ctx, failed: FailedOpEvidence
                    ) -> Iterator[tuple[OperandEvidence, int, tuple[str, dict[str, object]]]]:
    """(operand, the batch it should carry, the step that says what the op needed)."""
    fail = ctx.fail_line or failed.line
    data = _tensors(failed)
    if failed.op in LOSSES and len(data) >= 2:
        scores, labels = data[0], data[1]
        for mine, other in ((scores, labels), (labels, scores)):
            if other.shape and len(other.shape) <= 2:
                yield mine, other.shape[0], ("batch-wanted-loss", {
                    "fail_line": fail, "count": other.shape[0], "name": _said(mine.name),
                    "shape": shape_text(mine.shape), "target": _said(other.name)})
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
                if other is not mine and len(other.shape) >= 2:
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
    kind = "index-drops-batch" if first.op in INDEXES else "batch-merged"
    fixes: list[Fix] = []
    if changes and len({e.line for e, _ in changes}) == len(changes):
        en = " and ".join(f"`{new}` on line {e.line}" for e, new in changes)
        zh = "，".join(f"第 {e.line} 行改为 `{new}`" for e, new in changes)
        fixes.append(Fix(tuple(e for e, _ in changes), runs_clean, T(
            f"keep the samples in dimension 0: {en}", f"让样本留在第 0 维：{zh}")))
    keep = _keep_one_edit(ctx, first)
    if keep is not None and kind == "index-drops-batch":
        fixes.append(keep)
    expr = _expr(ctx, first)
    label = first.arg_parts()[0] if first.arg_parts() else None
    fill: dict[str, object] = {
        "line": root, "fail_line": ctx.fail_line or failed.line, "count": batch,
        "shape": shape_text(first.before or []), "target_shape": shape_text(first.shape),
        "expr": expr, "label": label if first.op in INDEXES else None,
        "name": _said(operand.name), "op": first.op,
    }
    return Candidate(kind, root, 0.85 if why[0] == "batch-wanted-loss" else 0.8, steps, fixes,
                     fill, pinned=True)


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
    if name == "flatten":
        method = isinstance(site.func, ast.Attribute) and text(site.func.value) not in (
            "torch", "th")
        return _call_with(site, 0 if method else 1, "start_dim", "1")
    if name in JOINS - {"hstack", "vstack"}:
        return _call_with(site, 1, "dim", "1")
    owner = text(site.func.value) if isinstance(site.func, ast.Attribute) else None
    if name in ("view", "reshape") and owner is not None and len(before) >= 2:
        return f"{owner}.{name}({owner}.size(0), -1)"
    if name == "squeeze" and owner is not None:
        ones = [d for d, size in enumerate(before) if size == 1 and d != 0]
        return f"{owner}.squeeze({ones[0]})" if len(ones) == 1 else owner if not ones else None
    return None


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
    elif value is not None:
        keywords.append((keyword, value))
    parts = args + [f"**{v}" if k is None else f"{k}={v}" for k, v in keywords]
    return f"{text(call.func)}({', '.join(parts)})"


# -- 2. a sample made without the dimension a layer wants -----------------------------------
def check_missing_dim(ctx: Ctx) -> list[Candidate]:
    """A layer checked its input's dimensions and found one missing where the learner's
    code made the tensor that way (no op of its lineage took the dimension away): one
    sample without its batch dimension, a sequence of numbers without its feature axis."""
    failed = failed_op(ctx)
    if failed is None or not failed.inputs:
        return []
    given = failed.inputs[0]
    kind = failed.module_kind or ""
    if kind in RNN_KINDS and RNN_INPUT.search(ctx.message):
        return _rnn_input(ctx, failed, given)
    m = RANK.search(ctx.message)
    if m and failed.op == "forward":
        wanted = int(m.group(1) or m.group(4))
        if len(given.shape) == wanted - 1:
            return _missing_batch(ctx, failed, given)
    return []


def _rnn_input(ctx: Ctx, failed: FailedOpEvidence, given: OperandEvidence) -> list[Candidate]:
    config = failed.config
    size = config.get("input_size")
    first = config.get("batch_first") is True
    shape = given.shape
    if not isinstance(size, int) or len(shape) != 2:
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
                   ) -> list[Candidate]:
    """The tensor the model was given is one sample: the lineage's entry into the model
    has the rank the failing layer wants less one, and no op took a dimension away."""
    lineage = Lineage(given)
    entry = lineage.entry()
    if entry is None or entry.before is None or len(entry.before) != len(given.shape):
        return []
    if any(s.op in SHAPE_OPS for s in lineage.steps[lineage.steps.index(entry):]):
        return []
    top = (failed.module or "").split(".")[0]
    trace = set(ctx.trace_lines())
    calls = [m.line for m in ctx.evidence.modules if m.module == top and m.line in trace]
    if not calls:
        return []
    call_line = calls[0]
    stmt = ctx.flow.statement_at(call_line)
    call = next((n for n in ast.walk(stmt) if isinstance(n, ast.Call) and text(n.func) == top
                 and n.args), None) if stmt is not None else None
    if call is None:
        return []
    arg = call.args[0]
    made = ctx.flow.assigned_before(arg.id, call_line) if isinstance(arg, ast.Name) else None
    fixes: list[Fix] = []
    root = call_line
    if made is not None and isinstance(made, (ast.Assign, ast.AnnAssign)) and \
            made.lineno < call_line and ctx.flow.function_at(made.lineno) is \
            ctx.flow.function_at(call_line):
        edit = suffix_value(ctx.code, made, ".unsqueeze(0)")
        if edit is not None:
            root = made.lineno
            fixes.append(Fix((edit,), runs_clean, T(
                f"add the batch dimension where `{text(arg)}` is made (line {root}): "
                "`.unsqueeze(0)`", f"在创建 `{text(arg)}` 的第 {root} 行加上批维："
                "`.unsqueeze(0)`")))
    at_call = replace_node(ctx.code, arg, postfix(arg, ".unsqueeze(0)"))
    if at_call is not None:
        fixes.append(Fix((at_call,), runs_clean, T(
            f"give `{top}` a batch of one on line {call_line}: `{postfix(arg, '.unsqueeze(0)')}`",
            f"第 {call_line} 行给 `{top}` 一个大小为 1 的批：`{postfix(arg, '.unsqueeze(0)')}`")))
    layer = _layer_name(failed)
    steps: Steps = [
        ("rank-wanted", {"fail_line": failed.line, "module": layer, "name": _said(given.name),
                         "shape": shape_text(given.shape)}),
        ("entered-model", {"line": call_line, "name": text(arg), "module": top,
                           "shape": shape_text(entry.before)}),
    ]
    return [Candidate("missing-batch-dim", root, 0.85, steps, fixes, {
        "line": root, "fail_line": failed.line, "module": layer, "name": text(arg),
        "shape": shape_text(entry.before), "model": top}, pinned=True)]


# -- 3. two tensors whose sizes disagree ------------------------------------------------------
def check_parted(ctx: Ctx) -> list[Candidate]:
    """Two tensors combined or joined on the failing line have sizes that disagree, and one
    was computed from the other (or both from one tensor): the ops on the way changed the
    size (a stride-2 layer halves an odd size and an upsampling doubles it back one off).
    Resize one to the other where they meet."""
    failed = _shape_failure(ctx)
    if failed is None or failed.op not in ELEMENTWISE | JOINS:
        return []
    data = [o for o in _tensors(failed) if o.history]
    join = failed.op in JOINS
    join_dim = _join_dim(ctx)
    for a in data:
        for b in data:
            if a is b or len(a.shape) != len(b.shape):
                continue
            differ = [d for d in range(len(a.shape)) if a.shape[d] != b.shape[d]
                      and (not join or d != join_dim)]
            if not differ or min(differ) == 0:
                continue
            path = Lineage(a).path_from(b.history[0].index) if b.history[0].index is not None \
                else None
            if not path:
                continue
            changed = [s for s in path if s.before and len(s.before) == len(s.shape) and any(
                s.before[d] != s.shape[d] for d in differ)]
            if len(changed) < 2 or not all(b.shape[d] / 2 < a.shape[d] < b.shape[d] * 2
                                           for d in differ):
                continue  # sizes meant to come back (down, then up) that came back near,
                # not a layer that made another size on purpose
            return [_parted(ctx, failed, a, b, differ, changed)]
    return []


def _join_dim(ctx: Ctx) -> int | None:
    m = JOIN_SIZES.search(ctx.message)
    return int(m.group(1)) if m and m.group(1) else None


def _parted(ctx: Ctx, failed: FailedOpEvidence, a: OperandEvidence, b: OperandEvidence,
            differ: list[int], changed: list[Step]) -> Candidate:
    line = ctx.fail_line or failed.line
    sizes = " → ".join(" × ".join(str(s.before[d]) for d in differ) for s in changed[:1]
                       if s.before) + "".join(
        " → " + " × ".join(str(s.shape[d]) for d in differ) for s in changed)
    steps: Steps = [("sizes-differ", {
        "fail_line": line, "name": _said(a.name), "shape": shape_text(a.shape),
        "target": _said(b.name), "target_shape": shape_text(b.shape)})]
    lines = [str(n) for n in dict.fromkeys(s.line for s in changed)]
    steps.append(("computed-from", {
        "name": _said(a.name), "target": _said(b.name), "line": b.line, "detail": sizes,
        "given": T(f"line{'s' if len(lines) > 1 else ''} {' and '.join(lines)}",
                   f"第 {'、'.join(lines)} 行")}))
    fixes: list[Fix] = []
    arg = _argument(ctx, line, a, failed) if a.name else None
    if arg is not None and b.name:
        first = min(differ)
        pads: list[str] = []
        for d in range(len(a.shape) - 1, first - 1, -1):
            pads += ["0", f"{b.name}.size({d}) - {text(arg)}.size({d})"]
        new = f"torch.nn.functional.pad({text(arg)}, [{', '.join(pads)}])"
        edit = replace_node(ctx.code, arg, new)
        if edit is not None:
            fixes.append(Fix((edit,), runs_clean, T(
                f"pad or crop `{text(arg)}` to the size of `{b.name}` where they meet on line "
                f"{line}: `{new}`",
                f"第 {line} 行在两者相遇处把 `{text(arg)}` 填充或裁剪到 `{b.name}` 的大小："
                f"`{new}`")))
    return Candidate("sizes-diverged", line, 0.8, steps, fixes, {
        "line": line, "name": _said(a.name), "target": _said(b.name),
        "shape": shape_text(a.shape), "target_shape": shape_text(b.shape), "detail": sizes},
        pinned=True)


# -- 4. an element of a model's output taken for another --------------------------------------
def check_output_element(ctx: Ctx) -> list[Candidate]:
    """One of two tensors that disagree was taken out of a module's output by position
    (``outputs[0]``), and its odd size was made by a layer inside that module: the element
    is not the one the line meant (the vocabulary scores of a language model rather than
    its hidden states). Names the line that picked it; no change is proposed, since which
    element was meant is the learner's to say."""
    failed = _shape_failure(ctx)
    m = BROADCAST.search(ctx.message)
    if failed is None or m is None or failed.op not in ELEMENTWISE:
        return []
    data = [o for o in _tensors(failed) if o.name]
    picked = [(o, p) for o in data if (p := _picked(ctx, o, failed)) is not None]
    if len(picked) != 1 or len(data) < 2:
        return []
    operand, stmt = picked[0]
    other = next(o for o in data if o is not operand)
    size = next((s for s in operand.shape if s in (int(m.group(1)), int(m.group(2)))), None)
    dim = operand.shape.index(size) if size is not None else None
    origin = Lineage(operand).origin(dim, size) if dim is not None and size is not None \
        else None
    if origin is None or origin.link.module is None:
        return []
    line = stmt.lineno
    steps: Steps = [
        ("sizes-differ", {"fail_line": ctx.fail_line or failed.line, "name": operand.name,
                          "shape": shape_text(operand.shape), "target": other.name,
                          "target_shape": shape_text(other.shape)}),
        ("picked-element", {"line": line, "name": operand.name,
                            "expr": text(ctx.flow.value_of(stmt) or stmt)}),
        ("size-made-by", {"line": origin.line, "count": size,
                          "module": module_label(origin.link.layer or origin.link.module),
                          "op": origin.op}),
    ]
    return [Candidate("wrong-output-element", line, 0.75, steps, [], {
        "line": line, "name": operand.name, "expr": text(ctx.flow.value_of(stmt) or stmt),
        "shape": shape_text(operand.shape), "target": other.name,
        "target_shape": shape_text(other.shape), "count": size,
        "module": module_label(origin.link.layer or origin.link.module)}, pinned=True)]


def _picked(ctx: Ctx, operand: OperandEvidence, failed: FailedOpEvidence) -> ast.stmt | None:
    """The statement that bound the operand's name to ``out[k]``, where ``out`` is what a
    call returned and the tensor itself was made elsewhere (inside
    the call): an element taken from a module's output by position."""
    if not operand.name or "." in operand.name:
        return None
    stmt = ctx.flow.assigned_before(operand.name, (ctx.fail_line or failed.line) + 1)
    value = ctx.flow.value_of(stmt) if stmt is not None else None
    if not isinstance(value, ast.Subscript) or not isinstance(value.slice, ast.Constant):
        return None
    base = value.value  # ``out[0]``: by position; ``out.hidden_states[1]`` is by name
    if not isinstance(base, ast.Name) or stmt is None or operand.line == stmt.lineno:
        return None
    made = ctx.flow.assigned_before(base.id, stmt.lineno)
    made_value = ctx.flow.value_of(made) if made is not None else None
    return stmt if isinstance(made_value, ast.Call) else None


# -- 5. where each shape came from, when no cause is pinned ----------------------------------
def check_shapes_traced(ctx: Ctx) -> list[Candidate]:
    """Two tensors disagree and the evidence pins no cause: the message's own diagnosis
    stays, with where each of them got its size in the dimension that disagrees."""
    failed = _shape_failure(ctx)
    m = BROADCAST.search(ctx.message)
    join = JOIN_SIZES.search(ctx.message)
    if failed is None or (m is None and join is None):
        return []
    data = [o for o in _tensors(failed) if o.history]
    if len(data) < 2:
        return []
    steps: Steps = []
    for operand, size in _disagreeing(data, m):
        dim = len(operand.shape) - 1 - operand.shape[::-1].index(size)
        origin = Lineage(operand).origin(dim, size)
        if origin is None:
            continue
        where = origin.link.layer or origin.link.module
        steps.append(("size-from", {
            "name": _said(operand.name), "shape": shape_text(operand.shape), "count": size,
            "line": origin.line, "op": origin.op,
            "module": module_label(where) if where else None}))
    if len(steps) < 2:
        return []
    cid = "broadcast-mismatch" if m else "cat-size-mismatch"
    line = ctx.fail_line or failed.line
    return [Candidate(cid, line, 0.5, steps, [], {"line": line})]


def _disagreeing(data: list[OperandEvidence], m: re.Match[str] | None
                 ) -> list[tuple[OperandEvidence, int]]:
    if m is not None:
        sizes = (int(m.group(1)), int(m.group(2)))
        out = []
        for operand, size in zip(data[:2], sizes, strict=False):
            if size in operand.shape:
                out.append((operand, size))
        return out
    first = data[0].shape
    other = next((o for o in data[1:] if o.shape != first and len(o.shape) == len(first)),
                 None)
    if other is None:
        return []
    dim = next(d for d in range(len(first)) if first[d] != other.shape[d])
    return [(data[0], first[dim]), (other, other.shape[dim])]

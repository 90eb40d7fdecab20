"""Shape provenance for two tensors whose sizes disagree (combined element by element, joined,
or a recurrent layer's input against the state it was given): which of them got the odd size,
and where. One computed from the other through layers that changed the size and brought it
back one off (sizes-diverged), one taken from a model's output by position (wrong-output-
element), one whose size was written where it was made (a configured batch size, another
dimension of the input: size-fixed-at-creation); where nothing pins a cause, the message's
own diagnosis with where each size came from. Lineages are read as in
:mod:`tutor.diagnosis.shape_checks`.
"""

from __future__ import annotations

import ast
import re

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import Edit, Fix, replace_node
from tutor.diagnosis.flow import module_label, text
from tutor.diagnosis.lineage import JOINS, Lineage, Step, shape_text
from tutor.diagnosis.operand_checks import failed_op
from tutor.diagnosis.shape_checks import (
    BROADCAST,
    ELEMENTWISE,
    JOIN_SIZES,
    Steps,
    _argument,
    _said,
    _shape_failure,
    _tensors,
)
from tutor.diagnosis.verify import runs_clean
from tutor.i18n import T
from tutor.sandbox.models import FailedOpEvidence, OperandEvidence

CREATIONS = frozenset({"zeros", "ones", "eye", "empty", "full", "rand", "randn", "zeros_like"})
"""Ops that make a tensor of the sizes they are given (not from data)."""
HIDDEN = re.compile(r"Expected hidden(?:\[0\])? size \(([\d, ]+)\), got \[([\d, ]+)\]")


# -- two tensors computed from one another ------------------------------------------------------
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


# -- an element of a model's output taken for another ---------------------------------------
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


# -- where each shape came from, when no cause is pinned -------------------------------------
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


# -- a size written where the tensor was made ----------------------------------------------------
def check_size_at_creation(ctx: Ctx) -> list[Candidate]:
    """One of the tensors that disagree got its odd size where the learner's code made it
    from a size (``torch.eye(args.batch_size)``, ``torch.zeros(1, x.size(0), h)``), while
    the other one's comes from the data: the size written there fits only batches that
    happen to have it (all but the last), or is another dimension of the input. The fix
    takes the size from the tensor it must match, where that tensor is in reach."""
    failed = failed_op(ctx)
    if failed is None:
        return []
    found: list[tuple[OperandEvidence, int, int, OperandEvidence | None, int | None]] = []
    m = BROADCAST.search(ctx.message)
    hidden = HIDDEN.search(ctx.message)
    data = _tensors(failed)
    if m is not None and len(data) >= 2:
        a, b = data[0], data[1]
        rank = max(len(a.shape), len(b.shape))
        dim = int(m.group(3))
        for mine, other in ((a, b), (b, a)):
            mine_dim, other_dim = dim - (rank - len(mine.shape)), dim - (rank - len(other.shape))
            if 0 <= mine_dim < len(mine.shape) and 0 <= other_dim < len(other.shape):
                found.append((mine, mine_dim, other.shape[other_dim], other, other_dim))
    elif hidden is not None and data:
        wanted = [int(v) for v in hidden.group(1).split(",")]
        got = [int(v) for v in hidden.group(2).split(",")]
        given = data[0]
        for state in data[1:]:
            if state.shape != got or len(wanted) != len(got):
                continue
            for dim, (w, g) in enumerate(zip(wanted, got, strict=True)):
                at = [k for k, size in enumerate(given.shape) if size == w]
                if w != g:
                    found.append((state, dim, w, given, at[0] if len(at) == 1 else None))
    return _creation_candidates(ctx, failed, found)


def _creation_candidates(ctx: Ctx, failed: FailedOpEvidence,
                         found: list[tuple[OperandEvidence, int, int, OperandEvidence | None,
                                           int | None]]) -> list[Candidate]:
    edits: list[Edit] = []
    taken = ""
    first: tuple[OperandEvidence, Step, ast.expr, int, int] | None = None
    for operand, dim, wanted, other, other_dim in found:
        size = operand.shape[dim]
        step = Lineage(operand).origin(dim, size)
        if step is None or step.op not in CREATIONS or (step.link.module is not None and (
                step.link.layer_kind or "") not in _learner_classes(ctx)):
            continue
        arg = _size_arg(step, ctx, dim)
        if arg is None or isinstance(arg, ast.Constant):
            continue  # a number written out is the shape the learner chose (their data)
        if first is None:
            first = (operand, step, arg, size, wanted)
        reach = _in_reach(ctx, other, step.line) if other is not None else None
        if reach is not None and other_dim is not None:
            taken = f"{reach}.size({other_dim})"
            edit = replace_node(ctx.code, arg, taken)
            if edit is not None and all(e.line != edit.line for e in edits):
                edits.append(edit)
    if first is None:
        return []
    operand, step, arg, size, wanted = first
    root = _given_at(ctx, arg, step.line)
    name = _said(operand.name)
    fixes = [Fix(tuple(edits), runs_clean, T(
        f"take the size from the data where {'the tensor is' if len(edits) < 2 else 'they are'}"
        f" made: `{taken}` on line{'s' if len(edits) > 1 else ''} "
        f"{' and '.join(str(e.line) for e in edits)}",
        f"在创建处（第 {'、'.join(str(e.line) for e in edits)} 行）从数据取得尺寸：`{taken}`"))] \
        if edits else []
    other = found[0][3]
    steps: Steps = [
        ("sizes-differ-at", {"fail_line": failed.line, "name": name,
                             "shape": shape_text(operand.shape), "count": size,
                             "numel": wanted, "target": _said(other.name) if other else None}),
        ("size-written", {"line": step.line, "expr": text(arg), "count": size, "op": step.op}),
    ]
    if root != step.line:
        steps.append(("size-given", {"line": root, "expr": text(arg), "count": size}))
    return [Candidate("size-fixed-at-creation", root, 0.75, steps, fixes, {
        "line": root, "name": name, "expr": text(arg), "count": size, "numel": wanted,
        "fail_line": failed.line, "op": step.op}, pinned=True)]


def _learner_classes(ctx: Ctx) -> set[str]:
    return {n.name for n in ast.walk(ctx.flow.tree) if isinstance(n, ast.ClassDef)}


def _size_arg(step: Step, ctx: Ctx, dim: int) -> ast.expr | None:
    """The argument of a creation call that gave dimension ``dim`` its size: the n-th size
    (given one by one or as one tuple), the only size of ``eye``."""
    call = step.node(ctx.flow)
    if not isinstance(call, ast.Call) or not call.args:
        return None
    if step.op == "eye":
        return call.args[0] if len(call.args) == 1 else call.args[dim] if dim < 2 else None
    sizes = call.args[0].elts if isinstance(call.args[0], (ast.Tuple, ast.List)) else [
        a for a in call.args if not isinstance(a, ast.Starred)]
    return sizes[dim] if dim < len(sizes) else None


def _in_reach(ctx: Ctx, other: OperandEvidence, line: int) -> str | None:
    """The other tensor's name where it can be read on ``line``: bound before it in the
    same function, or a parameter of that function."""
    name = other.name
    if not name or not re.fullmatch(r"[A-Za-z_]\w*", name):
        return None
    made = ctx.flow.assigned_before(name, line)
    here = ctx.flow.function_at(line)
    if made is not None and ctx.flow.function_at(made.lineno) is here:
        return name
    params = {a.arg for a in here.args.args} if here is not None else set()
    return name if name in params else None


def _given_at(ctx: Ctx, arg: ast.expr, line: int) -> int:
    """Where the size came from: the creation's line, or, for a parameter of the function
    that makes the tensor (``init_hidden(batch_size)``), the one call that gave it."""
    function = ctx.flow.function_at(line)
    if not isinstance(arg, ast.Name) or function is None:
        return line
    given = ctx.flow.arguments_for(function, arg.id)
    return given[0][0].lineno if len(given) == 1 else line


EXCEPTION_CHECKS: tuple[Check, ...] = (check_parted, check_output_element, check_size_at_creation,
                                       check_shapes_traced)
SILENT_CHECKS: tuple[Check, ...] = ()

"""The remedy torch's own message names, made on the learner's line and tried: a keyword it
says to pass (``You can pass `enforce_sorted=False` to pack_padded_sequence``), a ``clone()``
it asks for where two tensors share memory. The message says what to do but not where: the
failing line, the source and the run say which call or tensor it means. A keyword that only
hides a mismatch (``strict=False``) is never proposed.
"""

from __future__ import annotations

import ast
import re

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import Edit, Fix, postfix, replace_in_line, replace_nodes
from tutor.diagnosis.flow import call_name, target_names, text
from tutor.diagnosis.graph_checks import INPLACE_REWRITES
from tutor.diagnosis.verify import runs_clean
from tutor.diagnosis.view_checks import effect_dropped
from tutor.i18n import T

PASS_KEYWORD = re.compile(r"[Pp]ass `(?P<kw>\w+)=(?P<value>\w+)` to (?P<funcs>[\w ,/]+?)"
                          r"(?: and| to|\.|$)")
HIDING_KEYWORDS = frozenset({"strict", "allow_unused", "check_undefined_grad"})
"""Keywords whose only effect is to stop the check that raised: the mismatch stays."""
OUT_OF_PLACE = "replace the inplace operation by an out-of-place one"
SHARED_INPUT = "some elements of the input tensor and the written-to tensor refer to a single"
SHARED_OUTPUT = "more than one element of the written-to tensor refers to a single memory"


def check_keyword_the_message_names(ctx: Ctx) -> list[Candidate]:
    found = PASS_KEYWORD.search(ctx.message)
    line, stmt = ctx.failing_statement()
    if found is None or stmt is None or found["kw"] in HIDING_KEYWORDS:
        return []
    names = set(re.findall(r"\w+", found["funcs"]))
    calls = [c for c in ast.walk(stmt) if isinstance(c, ast.Call) and call_name(c) in names
             and all(k.arg != found["kw"] for k in c.keywords)]
    if not calls:
        return []
    call = calls[0]
    keyword = f"{found['kw']}={found['value']}"
    new = f"{text(call)[:-1]}, {keyword})"
    edit = replace_nodes(ctx.code, [(call, new)])
    if edit is None:
        return []
    fill = {"line": line, "op": call_name(call), "detail": f"`{keyword}`"}
    fix = Fix((edit,), runs_clean, T(f"on line {line} pass `{keyword}` to `{call_name(call)}`",
                                     f"第 {line} 行给 `{call_name(call)}` 传入 `{keyword}`"))
    return [Candidate("message-remedy", line, 0.8, [("remedy-keyword", fill)], [fix], fill)]


def check_out_of_place(ctx: Ctx) -> list[Candidate]:
    """"You should replace the inplace operation by an out-of-place one" (a view of a function
    that returns several, ``torch.split``/``chunk``/``unbind``, changed in place): the failing
    line made out of place, and with it the same change of the other views unpacked beside the
    one that failed (``a, b = torch.split(...)``, then ``a += ...; b += ...``). Not where the
    change was the point: a row of an iterated tensor, a function's argument it changes for
    its caller (out of place, the error goes and the change with it)."""
    line, stmt = ctx.failing_statement()
    if OUT_OF_PLACE not in ctx.message or stmt is None or effect_dropped(ctx, stmt):
        return []
    lines = [line, *_sibling_writes(ctx, stmt)]
    edits = []
    for number in lines:
        edit = next((e for p, r in INPLACE_REWRITES
                     if (e := replace_in_line(ctx.code, number, p, r)) is not None), None)
        if edit is not None:
            edits.append(edit)
    if not edits or edits[0].line != line:
        return []
    shown = "; ".join(f"`{e.text.strip()}`" for e in edits)
    fixes = [Fix(tuple(edits), runs_clean, T(
        f"make the in-place change out of place: {shown}",
        f"把原地修改改成非原地运算：{shown}"))]
    if len(edits) > 1:
        fixes.append(Fix((edits[0],), runs_clean, T(
            f"make line {line} out of place: `{edits[0].text.strip()}`",
            f"把第 {line} 行改为非原地运算：`{edits[0].text.strip()}`")))
    fill = {"line": line, "detail": "an out-of-place operation"}
    return [Candidate("message-remedy", line, 0.8, [("remedy-out-of-place", fill)], fixes,
                      fill)]


def _sibling_writes(ctx: Ctx, stmt: ast.stmt) -> list[int]:
    """Lines after ``stmt`` that change in place another name unpacked from the same call as
    the one ``stmt`` changes."""
    if not isinstance(stmt, ast.AugAssign) or not isinstance(stmt.target, ast.Name):
        return []
    made = ctx.flow.assigned_before(stmt.target.id, stmt.lineno)
    if not isinstance(made, ast.Assign) or len(made.targets) != 1 or not isinstance(
            made.targets[0], ast.Tuple):
        return []
    siblings = set(target_names(made.targets[0])) - {stmt.target.id}
    body = getattr(ctx.flow.parents.get(stmt), "body", [])
    return [s.lineno for s in body if s.lineno > stmt.lineno and isinstance(s, ast.AugAssign)
            and isinstance(s.target, ast.Name) and s.target.id in siblings]


def check_shared_memory(ctx: Ctx) -> list[Candidate]:
    """A write whose input shares memory with the tensor written (``mask[mask] = ...``,
    ``x.add_(x.t())``): the input is cloned on the line. A write into a tensor whose elements
    share memory (an ``expand``ed one): it is cloned where it is made."""
    line, stmt = ctx.failing_statement()
    if stmt is None:
        return []
    if SHARED_INPUT in ctx.message:
        return _clone_the_input(ctx, line, stmt)
    if SHARED_OUTPUT in ctx.message:
        return _clone_where_expanded(ctx, line, stmt)
    return []


def _written(stmt: ast.stmt) -> ast.expr | None:
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(
            stmt.targets[0], ast.Subscript):
        return stmt.targets[0].value
    calls = [c for c in ast.walk(stmt) if isinstance(c, ast.Call)
             and isinstance(c.func, ast.Attribute) and c.func.attr.endswith("_")]
    if not calls or not isinstance(calls[0].func, ast.Attribute):
        return None
    written = calls[0].func.value
    # ``x.mul_(a).add_(b)`` writes into ``x``
    while isinstance(written, ast.Call) and isinstance(written.func, ast.Attribute) and \
            written.func.attr.endswith("_"):
        written = written.func.value
    return written


def _clone_the_input(ctx: Ctx, line: int, stmt: ast.stmt) -> list[Candidate]:
    written = _written(stmt)
    if written is None:
        return []
    shown = text(written)
    reads = [n for n in ast.walk(stmt) if isinstance(n, ast.expr) and n is not written
             and text(n) == shown and isinstance(getattr(n, "ctx", ast.Load()), ast.Load)]
    if not reads:
        return []
    edit = replace_nodes(ctx.code, [(r, postfix(r, ".clone()")) for r in reads])
    if edit is None:
        return []
    fill = {"line": line, "name": shown, "detail": "`.clone()`"}
    fix = Fix((edit,), runs_clean, T(
        f"on line {line} read a copy of `{shown}` where it is also written: `{shown}.clone()`",
        f"第 {line} 行在写入 `{shown}` 的同时读取它的副本：`{shown}.clone()`"))
    return [Candidate("message-remedy", line, 0.8, [("remedy-shared-input", fill)], [fix], fill)]


def _clone_where_expanded(ctx: Ctx, line: int, stmt: ast.stmt) -> list[Candidate]:
    written = _written(stmt)
    if written is None:
        return []
    attr = written.attr if isinstance(written, ast.Attribute) else None
    name = written.id if isinstance(written, ast.Name) else None
    for node in ast.walk(ctx.flow.tree):
        made: ast.expr | None = None
        if attr and isinstance(node, ast.Call) and call_name(node) == "register_buffer" and \
                len(node.args) == 2 and isinstance(node.args[0], ast.Constant) and \
                node.args[0].value == attr:
            made = node.args[1]
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and text(
                node.targets[0]) == text(written) and node.lineno < line:
            made = node.value
        expand = _expand_in(made)
        if made is None or expand is None:
            continue
        edit = _appended(ctx.code, expand, ".clone()")
        at = expand.lineno
        fill = {"line": at, "fail_line": line, "name": attr or name or text(written),
                "detail": "`.clone()`"}
        fix = Fix((edit,), runs_clean, T(
            f"on line {at} make it a tensor of its own: `….expand(...).clone()`",
            f"第 {at} 行把它做成独立的张量：`….expand(...).clone()`")) if edit else None
        if fix is None:
            continue
        return [Candidate("message-remedy", at, 0.8, [("remedy-expanded", fill)], [fix], fill)]
    return []


def _expand_in(value: ast.expr | None) -> ast.Call | None:
    if value is None:
        return None
    return next((n for n in ast.walk(value) if isinstance(n, ast.Call)
                 and isinstance(n.func, ast.Attribute) and n.func.attr in ("expand", "expand_as")),
                None)


def _appended(code: str, node: ast.expr, suffix: str) -> Edit | None:
    """``suffix`` put right after ``node``, which may span lines (its last line changes)."""
    if node.end_lineno is None or node.end_col_offset is None:
        return None
    raw = code.splitlines()[node.end_lineno - 1].encode("utf-8")  # columns count bytes
    end = node.end_col_offset
    return Edit("replace", node.end_lineno, (raw[:end] + suffix.encode() + raw[end:]).decode())


VMAP_RANDOMNESS = "use the 'same' or 'different' randomness flags on vmap"
CONSIDER = re.compile(r"^(?P<old>[A-Z]\w+) does not support .*?please consider (?P<new>[A-Z]\w+) "
                      r"instead")


def check_vmap_randomness(ctx: Ctx) -> list[Candidate]:
    """A random op (dropout, ``randn_like``) under ``vmap``, which by default refuses them:
    the message names the flag, not the ``vmap`` call, which is elsewhere than the failing
    line (inside the function it maps). ``randomness="different"`` (each sample its own
    draw, what dropout in training means) is given to every ``vmap`` call and tried."""
    if VMAP_RANDOMNESS not in ctx.message:
        return []
    calls = [c for c in ctx.flow.calls_named("vmap")
             if all(k.arg != "randomness" for k in c.keywords) and c.lineno == c.end_lineno]
    edits: list[Edit] = []
    for call in calls:
        edit = replace_nodes(ctx.code, [(call, f'{text(call)[:-1]}, randomness="different")')])
        if edit is None or any(e.line == edit.line for e in edits):
            return []
        edits.append(edit)
    if not edits:
        return []
    root = calls[0].lineno
    fill = {"line": root, "op": "vmap", "detail": '`randomness="different"`'}
    return [Candidate("message-remedy", root, 0.8, [("remedy-keyword", fill)], [Fix(
        tuple(edits), runs_clean, T(
            f'on line {root} pass `randomness="different"` to `vmap`: each sample draws its '
            "own randomness (`\"same\"` shares one draw across the batch)",
            f'第 {root} 行给 `vmap` 传入 `randomness="different"`：每个样本各自抽取随机数'
            '（`"same"` 则整批共用一次）'))], fill)]


def check_class_the_message_names(ctx: Ctx) -> list[Candidate]:
    """"Adam does not support sparse gradients, please consider SparseAdam instead": the
    class named is swapped for the one the message proposes where the program builds it
    (not on the failing line, which only uses it), and tried: the proposal may not fit the
    rest of the program (SparseAdam takes sparse gradients only)."""
    found = CONSIDER.search(ctx.message)
    if found is None:
        return []
    built = [c for c in ctx.flow.calls if call_name(c) == found["old"]]
    edits = []
    for call in built[:2]:
        edit = replace_nodes(ctx.code, [(call.func, text(call.func)[:-len(found["old"])]
                                         + found["new"])])
        if edit is not None:
            edits.append(edit)
    if not edits or len({e.line for e in edits}) != len(edits):
        return []
    root = built[0].lineno
    fill = {"line": root, "op": found["old"], "detail": f"`{found['new']}`"}
    fixes = [Fix(tuple(edits), runs_clean, T(
        f"build a `{found['new']}` instead of `{found['old']}` on line {root}",
        f"第 {root} 行改为创建 `{found['new']}`，而不是 `{found['old']}`"))]
    if "sparse gradients" in ctx.message:
        # the layers that make them: dense gradients suit the optimizer as it is
        for call in ctx.flow.calls:
            flag = next((k for k in call.keywords if k.arg == "sparse"
                         and isinstance(k.value, ast.Constant) and k.value.value is True), None)
            edit = replace_nodes(ctx.code, [(flag.value, "False")]) if flag else None
            if edit is not None:
                fixes.insert(0, Fix((edit,), runs_clean, T(
                    f"let `{call_name(call)}` on line {call.lineno} make dense gradients, "
                    f"which `{found['old']}` takes: `sparse=False`",
                    f"让第 {call.lineno} 行的 `{call_name(call)}` 产生稠密梯度（"
                    f"`{found['old']}` 接受这种梯度）：`sparse=False`")))
                break
    return [Candidate("message-remedy", root, 0.7, [("remedy-class", fill)], fixes, fill)]


EXCEPTION_CHECKS: tuple[Check, ...] = (check_keyword_the_message_names, check_shared_memory,
                                       check_out_of_place, check_vmap_randomness,
                                       check_class_the_message_names)
SILENT_CHECKS: tuple[Check, ...] = ()

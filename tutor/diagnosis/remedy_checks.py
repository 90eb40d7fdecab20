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
    one that failed (``a, b = torch.split(...)``, then ``a += ...; b += ...``)."""
    line, stmt = ctx.failing_statement()
    if OUT_OF_PLACE not in ctx.message or stmt is None:
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


EXCEPTION_CHECKS: tuple[Check, ...] = (check_keyword_the_message_names, check_shared_memory,
                                       check_out_of_place)
SILENT_CHECKS: tuple[Check, ...] = ()

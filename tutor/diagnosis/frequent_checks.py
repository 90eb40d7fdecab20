"""Messages learners hit often whose fix is a change of the failing line that can be tried:
``copy.deepcopy`` of a tensor computed in the graph (copy its values with
``.detach().clone()``), a DataLoader used as an iterator or a list (``next(iter(loader))``),
and an optimizer given ``model.parameters`` without the call. Each fix is re-run; only one
shown to work is shown (benchmarks/frequent_messages.md lists how often each is asked).
"""

from __future__ import annotations

import ast
import re

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import Fix, replace_node
from tutor.diagnosis.flow import text
from tutor.diagnosis.verify import runs_clean
from tutor.i18n import T

OPTIMIZERS = frozenset({"SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax",
                        "NAdam", "RAdam", "ASGD", "LBFGS", "Rprop", "SparseAdam", "Adafactor"})
"""torch.optim's optimizers, by the name a call spells them with."""


def _calls(stmt: ast.stmt) -> list[ast.Call]:
    return [node for node in ast.walk(stmt) if isinstance(node, ast.Call)]


def check_deepcopy_computed(ctx: Ctx) -> list[Candidate]:
    if "support the deepcopy protocol" not in ctx.message:
        return []
    line, stmt = ctx.failing_statement()
    if stmt is None:
        return []
    call = next((c for c in _calls(stmt) if text(c.func) in ("copy.deepcopy", "deepcopy")
                 and len(c.args) == 1), None)
    if call is None:
        return []
    name = text(call.args[0])
    edit = replace_node(ctx.code, call, f"{name}.detach().clone()")
    fixes = [Fix((edit,), runs_clean, T(
        f"copy the values out of the graph on line {line}: `{name}.detach().clone()`",
        f"在第 {line} 行把数值从计算图中复制出来：`{name}.detach().clone()`"))] if edit else []
    fill = {"line": line, "name": name}
    return [Candidate("deepcopy-non-leaf", line, 0.85, [("deepcopy-of-computed", fill)],
                      fixes, fill)]


def check_loader_as_iterator(ctx: Ctx) -> list[Candidate]:
    if not re.search(r"DataLoader' object is not (?:an iterator|subscriptable)", ctx.message):
        return []
    line, stmt = ctx.failing_statement()
    if stmt is None:
        return []
    used: ast.expr | None = None
    loader = ""
    for node in ast.walk(stmt):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id == "next" and len(node.args) == 1 and not (
                isinstance(node.args[0], ast.Call) and text(node.args[0].func) == "iter"):
            used, loader = node, text(node.args[0])
            break
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and \
                node.slice.value == 0 and isinstance(node.ctx, ast.Load):
            used, loader = node, text(node.value)
            break
    if used is None:
        return []
    op = text(used)
    edit = replace_node(ctx.code, used, f"next(iter({loader}))")
    fixes = [Fix((edit,), runs_clean, T(
        f"take one batch with `next(iter({loader}))` on line {line}",
        f"在第 {line} 行用 `next(iter({loader}))` 取一个批次"))] if edit else []
    fill = {"line": line, "name": loader, "op": op}
    return [Candidate("dataloader-not-iterator", line, 0.85,
                      [("loader-used-as-iterator", fill)], fixes, fill)]


def check_parameters_not_called(ctx: Ctx) -> list[Candidate]:
    if ctx.error is None or ctx.error.type != "TypeError" or \
            "'method' object is not iterable" not in ctx.message:
        return []
    line, stmt = ctx.failing_statement()
    if stmt is None:
        return []
    for call in _calls(stmt):
        callee = text(call.func).rsplit(".", 1)[-1]
        given = call.args[0] if call.args else next(
            (k.value for k in call.keywords if k.arg == "params"), None)
        if callee not in OPTIMIZERS or not isinstance(given, ast.Attribute) or \
                given.attr not in ("parameters", "named_parameters"):
            continue
        name = text(given)
        edit = replace_node(ctx.code, given, f"{name}()")
        fixes = [Fix((edit,), runs_clean, T(
            f"call it: `{name}()` on line {line}", f"调用它：第 {line} 行写成 `{name}()`"))] \
            if edit else []
        fill = {"line": line, "name": name}
        return [Candidate("parameters-not-called", line, 0.9, [("method-not-called", fill)],
                          fixes, fill)]
    return []


EXCEPTION_CHECKS: tuple[Check, ...] = (check_deepcopy_computed, check_loader_as_iterator,
                                       check_parameters_not_called)
SILENT_CHECKS: tuple[Check, ...] = ()

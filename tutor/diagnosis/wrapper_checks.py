"""A model wrapped for several devices (``nn.DataParallel``, ``DistributedDataParallel``) and
read as if it were not, or the other way round. The wrapper runs its module's ``forward`` and
passes nothing else on: the module's own methods and attributes are reached through
``.module``. A model that was not wrapped (the wrap is conditional: one device, no process
group) has no ``.module``. Which of the two the error is comes from the message's type and the
attribute; the change tried reaches the attribute the way the object has it.
"""

from __future__ import annotations

import ast
import re

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import Fix, replace_nodes
from tutor.diagnosis.flow import call_name, text
from tutor.diagnosis.verify import runs_clean
from tutor.i18n import T

WRAPPERS = frozenset({"DataParallel", "DistributedDataParallel"})
NO_ATTR = re.compile(r"'(\w+)' object has no attribute '(\w+)'")


def _attributes(stmt: ast.stmt, attr: str) -> list[ast.Attribute]:
    """The reads of ``.attr`` on the statement's first line, outermost first."""
    return sorted((n for n in ast.walk(stmt) if isinstance(n, ast.Attribute) and n.attr == attr
                   and n.lineno == n.end_lineno == stmt.lineno),
                  key=lambda n: (n.col_offset, -(n.end_col_offset or 0)))


def _wraps(ctx: Ctx) -> list[ast.Call]:
    return [c for c in ctx.flow.calls if call_name(c) in WRAPPERS]


def check_wrapper_attribute(ctx: Ctx) -> list[Candidate]:
    """``model.log_weights(...)`` on a ``DataParallel``: the method is the module's."""
    m = NO_ATTR.search(ctx.message)
    if m is None or m.group(1) not in WRAPPERS or m.group(2) == "module":
        return []
    line, stmt = ctx.failing_statement()
    reads = _attributes(stmt, m.group(2)) if stmt is not None else []
    if not reads:
        return []
    wrapper, attr = m.group(1), m.group(2)
    owner = text(reads[0].value)
    edit = replace_nodes(ctx.code, [(r, f"{text(r.value)}.module.{attr}") for r in reads
                                    if text(r.value) == owner])
    wrap = next(iter(_wraps(ctx)), None)
    if wrap is None:
        return []  # the words name the line that wraps it
    fill: dict[str, object] = {"line": line, "name": owner, "detail": attr, "module": wrapper,
                               "before_line": wrap.lineno}
    fixes = [Fix((edit,), runs_clean, T(
        f"reach the wrapped model's `{attr}` through the wrapper on line {line}: "
        f"`{owner}.module.{attr}`",
        f"第 {line} 行通过包装器取被包装模型的 `{attr}`：`{owner}.module.{attr}`"))] \
        if edit is not None else []
    return [Candidate("wrapper-hides-attribute", line, 0.85, [("wrapper-attribute", fill)],
                      fixes, fill, only_if_tried=True)]


def check_module_of_unwrapped(ctx: Ctx) -> list[Candidate]:
    """``model.module.x`` where this run's ``model`` was never wrapped."""
    m = NO_ATTR.search(ctx.message)
    if m is None or m.group(2) != "module" or m.group(1) in WRAPPERS:
        return []
    line, stmt = ctx.failing_statement()
    reads = _attributes(stmt, "module") if stmt is not None else []
    if not reads:
        return []
    owner = text(reads[0].value)
    same = [r for r in reads if text(r.value) == owner]
    wraps = _wraps(ctx)
    # where the program wraps the model on some path (several devices), keep both paths
    either = f'getattr({owner}, "module", {owner})'
    fixes = []
    for new, describe in ((either, T(
            f"on line {line} take `.module` only where `{owner}` is wrapped: `{either}`",
            f"第 {line} 行只在 `{owner}` 被包装时才取 `.module`：`{either}`")), (owner, T(
            f"on line {line} use `{owner}` itself: it is not wrapped",
            f"第 {line} 行直接使用 `{owner}`：它没有被包装")))[0 if wraps else 1:]:
        edit = replace_nodes(ctx.code, [(r, new) for r in same])
        if edit is not None:
            fixes.append(Fix((edit,), runs_clean, describe))
    guard = next((a for w in wraps for a in ctx.flow.ancestors(w) if isinstance(a, ast.If)),
                 None)
    root = guard.lineno if guard is not None else line
    fill: dict[str, object] = {"line": line, "name": owner, "module": m.group(1),
                               "before_line": root,
                               "detail": text(guard.test) if guard is not None else ""}
    step = "unwrapped-when" if guard is not None else "never-wrapped"
    return [Candidate("module-of-unwrapped", line, 0.85, [(step, fill)], fixes, fill)]


EXCEPTION_CHECKS: tuple[Check, ...] = (check_wrapper_attribute, check_module_of_unwrapped)
SILENT_CHECKS: tuple[Check, ...] = ()

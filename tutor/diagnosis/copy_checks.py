"""A copy of a network that the program keeps (``target = copy.deepcopy(policy)``, synced
with ``load_state_dict``) but never runs: a DQN's target network, a mean teacher, an EMA
model. The values it was made to give (targets that move slowly) come from the network being
trained instead, and nothing fails.

The run records every module called; a copy the source makes and the run never calls, while
the network it copies is called under ``no_grad`` (or detached), is this mistake. The change
tried calls the copy there."""

from __future__ import annotations

import ast

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import Expect, Fix, replace_node
from tutor.diagnosis.flow import Flow, call_name, text
from tutor.i18n import T, Text
from tutor.sandbox.models import RunResult


def _bare(name: str) -> str:
    return name.removeprefix("self.")


def copies(flow: Flow) -> list[tuple[ast.stmt, str, str]]:
    """``(statement, copy, original)`` for each ``copy = copy.deepcopy(original)`` and each
    ``copy.load_state_dict(original.state_dict())``, as the source names them."""
    found: list[tuple[ast.stmt, str, str]] = []
    for stmt in flow.statements:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(
                stmt.value, ast.Call) and call_name(stmt.value) == "deepcopy" and \
                len(stmt.value.args) == 1:
            found.append((stmt, text(stmt.targets[0]), text(stmt.value.args[0])))
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and call_name(
                stmt.value) == "load_state_dict" and isinstance(stmt.value.func, ast.Attribute) \
                and stmt.value.args and isinstance(stmt.value.args[0], ast.Call) and \
                call_name(stmt.value.args[0]) == "state_dict" and isinstance(
                    stmt.value.args[0].func, ast.Attribute):
            found.append((stmt, text(stmt.value.func.value),
                          text(stmt.value.args[0].func.value)))
    return found


def _target_calls(flow: Flow, original: str) -> list[ast.Call]:
    """Calls of ``original`` whose result is not trained on: under ``no_grad`` or detached."""
    calls = []
    for call in flow.calls:
        if text(call.func) != original:
            continue
        detached = any(isinstance(a, ast.Call) and call_name(a) == "detach"
                       for a in flow.ancestors(call)[:4])
        if flow.in_no_grad(call) is not None or detached:
            calls.append(call)
    return calls


def _called(copy: str) -> Expect:
    def expect(original: RunResult, fixed: RunResult) -> Text | None:
        ev = fixed.evidence
        if fixed.outcome != "ok" or ev is None or not any(
                _bare(m.module) == _bare(copy) for m in ev.modules):
            return None
        return T(f"with this change `{copy}` gives the values it was made for, and the program "
                 "runs to the end",
                 f"改动后由 `{copy}` 给出它本来要给的值，程序也能运行到底")
    return expect


def check_copy_never_run(ctx: Ctx) -> list[Candidate]:
    if ctx.error is not None or not ctx.evidence.backwards:
        return []
    called = {_bare(m.module) for m in ctx.evidence.modules}
    # the networks whose values, taken without a graph, went into a loss the run trained on
    # (targets), not only into an evaluation
    targeted = {_bare(link.module) for b in ctx.evidence.backwards for link in b.chain
                if link.module and any(c.cut in ("no_grad", "detach") or c.op == "detach"
                                       for c in b.chain)}
    out: list[Candidate] = []
    seen: set[str] = set()
    for stmt, copy, original in copies(ctx.flow):
        if copy in seen or _bare(copy) in called or _bare(original) not in targeted:
            continue
        seen.add(copy)
        targets = _target_calls(ctx.flow, original)
        if not targets:
            continue
        line = targets[0].lineno
        fixes = []
        edit = replace_node(ctx.code, targets[0].func, copy)
        if edit is not None:
            fixes.append(Fix((edit,), _called(copy), T(
                f"call `{copy}` instead of `{original}` on line {line}",
                f"第 {line} 行调用 `{copy}`，而不是 `{original}`")))
        fill: dict[str, object] = {"line": line, "name": copy, "model": original,
                                   "before_line": stmt.lineno}
        out.append(Candidate("copy-never-run", line, 0.8, [("copy-not-called", fill)], fixes,
                             fill, pinned=True))
    return out[:1]


EXCEPTION_CHECKS: tuple[Check, ...] = ()
SILENT_CHECKS: tuple[Check, ...] = (check_copy_never_run,)

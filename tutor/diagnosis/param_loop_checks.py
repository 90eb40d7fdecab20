"""A loop over an optimizer's parameters (a hand-written optimizer's ``step``, a gradient
scaling helper) that reads every parameter's ``.grad``, while some parameters it holds get
none: frozen ones (``requires_grad=False``) and ones no backward() reaches keep ``.grad`` None,
and ``None.data`` or ``None * k`` fails. torch's own optimizers skip them; the changes tried
are the same skip at the top of each such loop, or giving the optimizer only the parameters
that train where it is built."""

from __future__ import annotations

import ast
import re

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import Edit, Fix, replace_node
from tutor.diagnosis.flow import Flow, call_name, text
from tutor.diagnosis.training_checks import _freezes
from tutor.diagnosis.verify import runs_clean
from tutor.i18n import T

NONE_GRAD = re.compile(r"'NoneType' object has no attribute|unsupported operand type\(s\) for "
                       r"[^:]+: '\w+' and 'NoneType'|unsupported operand type\(s\) for [^:]+: "
                       r"'NoneType'")


def _walks_params(loop: ast.For) -> bool:
    """``for p in group["params"]`` or ``for p in model.parameters()``."""
    it = loop.iter
    if isinstance(it, ast.Subscript) and isinstance(it.slice, ast.Constant):
        return it.slice.value == "params"
    return isinstance(it, ast.Call) and call_name(it) == "parameters"


def _param_loops(flow: Flow, stmt: ast.stmt) -> tuple[ast.For | None, list[ast.For]]:
    """The loop over parameters that holds ``stmt``, and every such loop of its function
    whose target is read as ``<target>.grad`` or used to look up what one such read kept."""
    loop = next((a for a in flow.ancestors(stmt) if isinstance(a, ast.For)
                 and isinstance(a.target, ast.Name) and _walks_params(a)), None)
    if loop is None:
        return None, []
    scope = flow.enclosing_function(loop)
    tree = scope if scope is not None else flow.tree
    loops = [n for n in ast.walk(tree) if isinstance(n, ast.For)
             and isinstance(n.target, ast.Name) and _walks_params(n)]
    return loop, loops


def _skips(ctx: Ctx, loops: list[ast.For]) -> Fix | None:
    edits = []
    for loop in loops:
        name = loop.target.id  # type: ignore[attr-defined]
        edits.append(Edit("insert_before", loop.body[0].lineno,
                          f"if {name}.grad is None: continue"))
    if not edits:
        return None
    lines = ", ".join(str(lp.body[0].lineno) for lp in loops)
    name = loops[0].target.id  # type: ignore[attr-defined]
    return Fix(tuple(edits), runs_clean, T(
        f"skip the parameters without a gradient, as torch's optimizers do: "
        f"`if {name}.grad is None: continue` at the top of the loop (line {lines})",
        f"像 torch 自带的优化器那样跳过没有梯度的参数：在循环开头（第 {lines} 行）写 "
        f"`if {name}.grad is None: continue`"))


def _only_trained(ctx: Ctx) -> Fix | None:
    """The optimizer built from ``X.parameters()`` given only those that require grad."""
    for call in ctx.flow.calls:
        given = call.args[0] if call.args else None
        if not (isinstance(given, ast.Call) and call_name(given) == "parameters"
                and _builds_optimizer(ctx.flow, call)):
            continue
        new = f"[p for p in {text(given)} if p.requires_grad]"
        edit = replace_node(ctx.code, given, new)
        if edit is not None:
            return Fix((edit,), runs_clean, T(
                f"give the optimizer only the parameters that train, on line {call.lineno}: "
                f"`{new}`",
                f"第 {call.lineno} 行只把需要训练的参数交给优化器：`{new}`"))
    return None


def _builds_optimizer(flow: Flow, call: ast.Call) -> bool:
    """A call of a class of the program that subclasses an Optimizer, or of torch.optim."""
    name = call_name(call)
    if "optim" in text(call.func):
        return True
    return any(isinstance(c, ast.ClassDef) and c.name == name and any(
        "Optimizer" in text(b) for b in c.bases) for c in ast.walk(flow.tree))


def check_param_loop_none_grad(ctx: Ctx) -> list[Candidate]:
    if not NONE_GRAD.search(ctx.message):
        return []
    line, stmt = ctx.failing_statement()
    if stmt is None:
        return []
    loop, loops = _param_loops(ctx.flow, stmt)
    if loop is None or f"{loop.target.id}.grad" not in text(stmt):  # type: ignore[attr-defined]
        return []
    name = loop.target.id  # type: ignore[attr-defined]
    idle = [p for p in ctx.evidence.params if p.grad_none and (not p.requires_grad
                                                               or not p.reached)]
    if not idle:
        return []
    frozen = next((s for s in ctx.flow.statements if _freezes(s)), None)
    fill: dict[str, object] = {
        "line": line, "name": name, "params": ", ".join(f"`{p.name}`" for p in idle[:4]),
        "fail_line": frozen.lineno if frozen is not None else line}
    fixes = [f for f in (_skips(ctx, loops), _only_trained(ctx)) if f is not None]
    steps: list[tuple[str, dict[str, object]]] = [("params-without-grad", fill)]
    if frozen is not None:
        steps.append(("frozen-here", fill))
    return [Candidate("param-loop-none-grad", line, 0.85, steps, fixes, fill)]


EXCEPTION_CHECKS: tuple[Check, ...] = (check_param_loop_none_grad,)
SILENT_CHECKS: tuple[Check, ...] = ()

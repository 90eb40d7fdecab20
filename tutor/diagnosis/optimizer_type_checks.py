"""A learning-rate scheduler given something that is not a ``torch.optim.Optimizer``: torch
refuses it by its class ("SRSGD is not an Optimizer"). The message names the class; where the
program defines it, the source says which of two things it is:

- an optimizer written from scratch (``class SRSGD(object)``): it keeps ``param_groups`` as an
  optimizer does, but schedulers only take subclasses of ``torch.optim.Optimizer``; the class
  is made one, and that is tried;
- a wrapper around an optimizer (``class LARC: self.optim = optimizer``): the scheduler is to
  be given the optimizer it wraps (``optimizer.optim``), and that is tried.
"""

from __future__ import annotations

import ast
import re

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import Edit, Fix, replace_node
from tutor.diagnosis.flow import Flow, call_name, text
from tutor.diagnosis.verify import runs_clean
from tutor.i18n import T

NOT_OPTIMIZER = re.compile(r"^(\w+) is not an Optimizer$")


def check_not_an_optimizer(ctx: Ctx) -> list[Candidate]:
    found = NOT_OPTIMIZER.match(ctx.message.strip()) if ctx.error is not None else None
    if found is None or ctx.error is None or ctx.error.type != "TypeError":
        return []
    name = found.group(1)
    cls = next((n for n in ast.walk(ctx.flow.tree) if isinstance(n, ast.ClassDef)
                and n.name == name), None)
    site = _scheduler_site(ctx)
    line, given = site if site is not None else (0, None)
    if cls is None or given is None:
        return []  # a class the program does not define: the message says all it can
    wrapped = _wrapped_optimizer(ctx.flow, cls)
    if wrapped is not None:
        new = f"{text(given)}.{wrapped}"
        edit = replace_node(ctx.code, given, new)
        fill: dict[str, object] = {"line": line, "name": name, "class_line": cls.lineno,
                                   "given": text(given), "new": new}
        fixes = [Fix((edit,), runs_clean, T(
            f"give the scheduler the optimizer `{name}` wraps: `{new}` on line {line}",
            f"第 {line} 行把 `{name}` 包装的优化器交给调度器：`{new}`"))] if edit else []
        return [Candidate("scheduler-given-wrapper", line, 0.9, [
            ("wrapper-holds-optimizer", fill)], fixes, fill)]
    bases = ", ".join(text(b) for b in cls.bases) or "object"
    fill = {"line": cls.lineno, "name": name, "given": bases, "fail_line": line}
    edit = _rebased(ctx.code, cls)
    fixes = [Fix((edit,), runs_clean, T(
        f"derive `{name}` from `torch.optim.Optimizer` on line {cls.lineno}",
        f"第 {cls.lineno} 行让 `{name}` 继承 `torch.optim.Optimizer`"))] if edit else []
    return [Candidate("optimizer-not-subclass", cls.lineno, 0.9, [
        ("class-not-optimizer", fill)], fixes, fill)]


def _scheduler_site(ctx: Ctx) -> tuple[int, ast.expr] | None:
    """Where the program builds the scheduler that refused its optimizer, and what it hands
    it as the optimizer: the failing line, or a line of the traceback that builds one of the
    program's own scheduler classes (whose ``super().__init__`` passed it on)."""
    own = {n.name for n in ast.walk(ctx.flow.tree) if isinstance(n, ast.ClassDef)
           and any("lr_scheduler" in text(b) or text(b).endswith(("LR", "Scheduler"))
                   for b in n.bases)}
    frames = ctx.error.traceback if ctx.error is not None else []
    lines = [f.line for f in reversed(frames)] or [ctx.fail_line or 0]
    for number in lines:
        stmt = ctx.flow.statement_at(number)
        for node in ast.walk(stmt) if stmt is not None else ():
            name = call_name(node) if isinstance(node, ast.Call) else None
            if not isinstance(node, ast.Call) or name is None or not (
                    "lr_scheduler" in text(node.func) or name in own
                    or name.endswith(("LR", "Scheduler", "OnPlateau"))):
                continue
            first = node.args[0] if node.args else next(
                (k.value for k in node.keywords if k.arg == "optimizer"), None)
            if isinstance(first, (ast.Name, ast.Attribute)):
                return number, first
    return None


def _wrapped_optimizer(flow: Flow, cls: ast.ClassDef) -> str | None:
    """The attribute of ``cls`` that holds an optimizer its constructor is given: ``optim``
    for ``self.optim = optimizer`` in ``__init__(self, optimizer, ...)``, where a call of the
    class passes an optimizer the program builds."""
    init = next((n for n in cls.body if isinstance(n, ast.FunctionDef)
                 and n.name == "__init__"), None)
    if init is None:
        return None
    params = [a.arg for a in init.args.args[1:]]
    held = {}
    for node in ast.walk(init):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(
                node.value, ast.Name) and node.value.id in params:
            target = node.targets[0]
            if isinstance(target, ast.Attribute) and text(target.value) == "self":
                held[node.value.id] = target.attr
    optimizers = {name for _, name, _ in flow.optimizers() if name}
    for call in flow.calls:
        if call_name(call) != cls.name:
            continue
        for index, arg in enumerate(call.args):
            param = params[index] if index < len(params) else None
            made = isinstance(arg, ast.Call) and "optim." in text(arg.func)
            if param in held and (made or text(arg) in optimizers):
                return held[param]
        for keyword in call.keywords:
            if keyword.arg in held and (text(keyword.value) in optimizers or (
                    isinstance(keyword.value, ast.Call)
                    and "optim." in text(keyword.value.func))):
                return held[keyword.arg]
    return None


def _rebased(code: str, cls: ast.ClassDef) -> Edit | None:
    """``class SRSGD(torch.optim.Optimizer):`` in place of the class line as written."""
    lines = code.splitlines()
    row = lines[cls.lineno - 1]
    head = re.match(r"(\s*class\s+\w+)\s*(\([^)]*\))?\s*:(.*)$", row)
    if head is None:
        return None
    return Edit("replace", cls.lineno, f"{head.group(1)}(torch.optim.Optimizer):{head.group(3)}")


EXCEPTION_CHECKS: tuple[Check, ...] = (check_not_an_optimizer,)
SILENT_CHECKS: tuple[Check, ...] = ()

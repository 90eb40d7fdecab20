"""Module hooks that do not do what the program registered them for, without an error:

- ``module.forward(x)`` called directly: only ``module(x)`` (``Module.__call__``) runs the
  hooks registered on the module, so a forward hook never sees the call and a backward hook
  never changes the gradient (a gradient-reversal layer trains the features the wrong way);
- ``register_backward_hook``, the legacy module hook: it is attached to the last operation of
  the module's forward, so ``grad_input`` holds that operation's inputs (a bias, a partial sum),
  not the module's; ``register_full_backward_hook`` gives the gradients of the module's inputs.

Both changes are tried, and kept where the program then prints something else: what it
printed was the hook's effect (or its absence)."""

from __future__ import annotations

import ast

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import Fix, replace_node, replace_nodes
from tutor.diagnosis.flow import text
from tutor.diagnosis.verify import prints_else
from tutor.i18n import T

MODULE_HOOKS = frozenset({"register_forward_hook", "register_forward_pre_hook",
                          "register_full_backward_hook", "register_full_backward_pre_hook",
                          "register_backward_hook"})


def _direct_forwards(ctx: Ctx) -> list[ast.Call]:
    """``m.forward(...)`` calls on another module than the class's own (``super().forward``
    and ``self.forward`` inside its methods are how a subclass reuses its parent's)."""
    out = []
    for call in ctx.flow.calls_named("forward"):
        func = call.func
        if not isinstance(func, ast.Attribute) or isinstance(func.value, ast.Call):
            continue  # super().forward(...), a call's result
        if isinstance(func.value, ast.Name) and func.value.id in ("self", "cls"):
            continue
        out.append(call)
    return out


def check_forward_skips_hooks(ctx: Ctx) -> list[Candidate]:
    if ctx.error is not None or not ctx.flow.calls_named(*MODULE_HOOKS):
        return []
    calls = _direct_forwards(ctx)
    if not calls:
        return []
    changes: list[tuple[ast.AST, str]] = []
    for call in calls:
        assert isinstance(call.func, ast.Attribute)
        args = [text(a) for a in call.args] + [
            f"{k.arg}={text(k.value)}" if k.arg else f"**{text(k.value)}" for k in call.keywords]
        changes.append((call, f"{text(call.func.value)}({', '.join(args)})"))
    edit = replace_nodes(ctx.code, changes)
    if edit is None:
        return []
    first = calls[0]
    assert isinstance(first.func, ast.Attribute)
    name = text(first.func.value)
    facts: dict[str, object] = {"line": first.lineno, "module": name}
    return [Candidate("forward-skips-hooks", first.lineno, 0.7, [
        ("forward-called-directly", facts)], [Fix((edit,), prints_else, T(
            f"call the module, not its forward: `{name}(...)` on line {first.lineno}",
            f"调用模块本身，而不是它的 forward：第 {first.lineno} 行写 `{name}(...)`"))],
        facts)]


def check_legacy_backward_hook(ctx: Ctx) -> list[Candidate]:
    if ctx.error is not None:
        return []
    out = []
    for call in ctx.flow.calls_named("register_backward_hook"):
        func = call.func
        if not isinstance(func, ast.Attribute):
            continue
        edit = replace_node(ctx.code, func, f"{text(func.value)}.register_full_backward_hook")
        if edit is None:
            continue
        facts: dict[str, object] = {"line": call.lineno, "module": text(func.value)}
        out.append(Candidate("legacy-backward-hook", call.lineno, 0.7, [
            ("legacy-hook", facts)], [Fix((edit,), prints_else, T(
                f"register it with `register_full_backward_hook` on line {call.lineno}",
                f"第 {call.lineno} 行改用 `register_full_backward_hook` 注册"))], facts))
    return out[:1]


EXCEPTION_CHECKS: tuple[Check, ...] = ()
SILENT_CHECKS: tuple[Check, ...] = (check_forward_skips_hooks, check_legacy_backward_hook)

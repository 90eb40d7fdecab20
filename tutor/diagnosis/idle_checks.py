"""Parameters the optimizer holds that no backward() ever reaches: the learner gave them to
the optimizer to train them, and they keep their first values. The re-run says which ones;
the search for the cause tries the few changes that decide whether a gradient reaches them,
and keeps one only when, with it, those parameters are updated by training:

- a module made frozen by how it was built (a constructor whose ``freeze`` or
  ``requires_grad`` says so, ``nn.Embedding.from_pretrained`` freezing by default), where
  the program watches those weights or nothing learns;
- a call that torch warned about during the run (the warning's line is the learner's): a
  boolean keyword of it set the other way (``checkpoint(..., use_reentrant=True)`` on an input
  that does not require grad runs the layers without a graph and warns "Gradients will be
  None").

Freezing written as a statement is :func:`training_checks.check_frozen`'s; a graph cut by
``.data``, ``detach()`` or a rebuilt tensor is ``graph_checks``'."""

from __future__ import annotations

import ast

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import Fix, replace_node
from tutor.diagnosis.flow import Flow, call_name, receiver, text
from tutor.diagnosis.messages import for_learner
from tutor.diagnosis.training_checks import _freezes, _names, _not_learning
from tutor.diagnosis.verify import params_learn
from tutor.i18n import T
from tutor.sandbox.models import ParamEvidence

FREEZING_DEFAULTS = {"from_pretrained": "freeze"}
"""Constructors that freeze what they build unless told otherwise, and the keyword that
tells them (``nn.Embedding.from_pretrained(w)`` is ``freeze=True``)."""
_UNFROZEN = {"freeze": "False", "requires_grad": "True"}
"""The keywords that say whether a constructor's weights train, set so that they do."""


def check_idle_params(ctx: Ctx) -> list[Candidate]:
    ev, flow = ctx.evidence, ctx.flow
    if ctx.error is not None or not ev.steps or not ev.backwards:
        return []
    idle = [p for p in ev.params if p.in_optimizer and p.grad_none and not p.changed
            and p.name != "?" and not _frozen_by_statement(flow, p.name)]
    if not idle:
        return []
    out = _frozen_where_built(ctx, [p for p in idle if not p.requires_grad])
    out += _warned_calls(ctx, [p for p in idle if p.requires_grad])
    return out


def _frozen_by_statement(flow: Flow, name: str) -> bool:
    """A freezing statement (``p.requires_grad = False``, ``m.requires_grad_(False)``) that
    names this parameter, a module it belongs to, or loops over that module's parameters:
    frozen on purpose, or check_frozen's. One whose target the source does not say counts."""
    for stmt in flow.statements:
        if _freezes(stmt):
            owner = _frozen_owner(flow, stmt)
            if owner is None or name == owner or name.startswith(owner + "."):
                return True
    return False


def _frozen_owner(flow: Flow, stmt: ast.stmt) -> str | None:
    """What a freezing statement freezes: the module of ``m.requires_grad_(False)``, the
    tensor of ``w.requires_grad = False``, the receiver of the ``.parameters()`` its loop
    walks; None when the source does not say."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        owner = receiver(stmt.value)
    else:
        owner = text(stmt.targets[0]).rsplit(".", 1)[0]  # type: ignore[attr-defined]
    loop = flow.parents.get(stmt)
    if isinstance(loop, ast.For) and text(loop.target) == owner:
        return receiver(loop.iter) if isinstance(loop.iter, ast.Call) else None
    return owner or None


def _watched(flow: Flow, params: list[ParamEvidence]) -> bool:
    """The program reads one of these parameters itself (a copy taken before training, a
    print): the learner expects it to change."""
    names = {p.name for p in params}
    tails = {p.name.split(".", 1)[1] for p in params if "." in p.name}
    for node in ast.walk(flow.tree):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            seen = text(node)
            if seen in names or (seen.startswith("self.") and seen[5:] in tails):
                return True
    return False


def _frozen_where_built(ctx: Ctx, frozen: list[ParamEvidence]) -> list[Candidate]:
    flow = ctx.flow
    if not frozen or not (_not_learning(ctx) or _watched(flow, frozen)):
        return []
    out = []
    modules = dict.fromkeys(p.name.rsplit(".", 1)[0] for p in frozen if "." in p.name)
    for module in modules:
        mine = [p for p in frozen if p.name.rsplit(".", 1)[0] == module]
        found = [(call, fix) for call in _constructors(flow, module)
                 if (fix := _unfreezing(ctx, call, mine)) is not None]
        if not found:
            continue
        call, fix = found[-1]
        out.append(Candidate("params-frozen-when-built", call.lineno, 0.8, [
            ("idle-in-optimizer", {"params": _names(mine)}),
            ("built-frozen", {"line": call.lineno, "op": call_name(call), "params": _names(mine)}),
        ], [fix], {"line": call.lineno, "params": _names(mine), "op": call_name(call)}))
    return out


def _constructors(flow: Flow, module: str) -> list[ast.Call]:
    """Every call that builds the module the evidence names ``module`` (``model.embedding``
    is ``self.embedding = ...`` in the class; one per branch of an ``if``)."""
    last = module.rsplit(".", 1)[-1]
    found = [flow.value_of(stmt) for name in dict.fromkeys([module, f"self.{last}"])
             for stmt in flow.assignments.get(name, [])]
    return [call for call in found if isinstance(call, ast.Call)]


def _unfreezing(ctx: Ctx, call: ast.Call, params: list[ParamEvidence]) -> Fix | None:
    """The constructor told to build weights that train: a freezing keyword set the other
    way, or the one its default needs."""
    name = call_name(call)
    given = {k.arg: k for k in call.keywords if k.arg}
    wanted = {k: v for k, v in _UNFROZEN.items() if k in given}
    default = FREEZING_DEFAULTS.get(name or "")
    if default and default not in given:
        wanted[default] = _UNFROZEN[default]
    if not wanted:
        return None
    args = [text(a) for a in call.args]
    args += [f"{k.arg}={wanted.get(k.arg, text(k.value))}" if k.arg else f"**{text(k.value)}"
             for k in call.keywords]
    args += [f"{k}={v}" for k, v in wanted.items() if k not in given]
    edit = replace_node(ctx.code, call, f"{text(call.func)}({', '.join(args)})")
    if edit is None:
        return None
    said = ", ".join(a for a in args if "=" in a and a.split("=")[0] in _UNFROZEN)
    return Fix((edit,), params_learn([p.name for p in params]), T(
        f"build it with weights that train: `{said}` on line {call.lineno}",
        f"构建时让权重可训练：第 {call.lineno} 行写 `{said}`"))


def _warned_calls(ctx: Ctx, unreached: list[ParamEvidence]) -> list[Candidate]:
    if not unreached:
        return []
    out = []
    names = [p.name for p in unreached]
    for warning in ctx.result.warnings:
        line = warning.line
        stmt = ctx.flow.statement_at(line) if line else None
        if stmt is None or line is None:
            continue
        message = for_learner(warning.message).strip().splitlines()[0]
        fixes = []
        for call in (n for n in ast.walk(stmt) if isinstance(n, ast.Call)):
            for keyword in call.keywords:
                value = keyword.value
                if keyword.arg and isinstance(value, ast.Constant) and isinstance(
                        value.value, bool):
                    flipped = "False" if value.value else "True"
                    edit = replace_node(ctx.code, value, flipped)
                    if edit is not None:
                        fixes.append(Fix((edit,), params_learn(names), T(
                            f"pass `{keyword.arg}={flipped}` to `{call_name(call)}` on line "
                            f"{line}", f"第 {line} 行给 `{call_name(call)}` 传 "
                            f"`{keyword.arg}={flipped}`")))
        if fixes:
            out.append(Candidate("params-unreached-warned", line, 0.75, [
                ("idle-in-optimizer", {"params": _names(unreached)}),
                ("torch-warned", {"line": line, "why": message}),
            ], fixes, {"line": line, "params": _names(unreached), "why": message}))
    return out


EXCEPTION_CHECKS: tuple[Check, ...] = ()
SILENT_CHECKS: tuple[Check, ...] = (check_idle_params,)

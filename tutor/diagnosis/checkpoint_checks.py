"""Weights read and never given to the model: ``state = torch.load(path)`` (or a checkpoint's
``["model"]``, a ``state_dict()`` copy) bound to a name the program never reads again, and no
``load_state_dict`` takes it, so the model keeps the weights it was built with and predicts
at random, silently. The change tried loads them into a model the program built; it is kept
only where the program then runs and prints something else than it did."""

from __future__ import annotations

import ast

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import Edit, Fix
from tutor.diagnosis.flow import Flow, call_name, text
from tutor.diagnosis.verify import prints_else
from tutor.i18n import T

WEIGHT_KEYS = frozenset({"model", "state_dict", "model_state_dict", "net", "weights",
                         "params", "model_state", "network"})
"""The keys a checkpoint keeps a model's weights under."""
MOST_MODELS = 2


def _holds_weights(value: ast.expr) -> bool:
    """``torch.load(...)``, ``x.state_dict()`` (copied or not), ``ckpt["model"]``."""
    for node in ast.walk(value):
        if isinstance(node, ast.Call) and (call_name(node) == "state_dict" or text(
                node.func).endswith("torch.load")):
            return True
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and \
                node.slice.value in WEIGHT_KEYS:
            return True
    return False


def _read_after(flow: Flow, name: str, line: int) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
               and n.lineno > line for n in ast.walk(flow.tree))


def _models(flow: Flow, before: int, scope: ast.AST) -> list[str]:
    """Names of the scope bound to a model before ``before`` (a class of the program based on
    a Module, or an ``nn.`` layer), the nearest first."""
    modules = {c.name for c in ast.walk(flow.tree) if isinstance(c, ast.ClassDef) and any(
        text(b).split(".")[-1] == "Module" for b in c.bases)}
    found: list[tuple[int, str]] = []
    for name, stmts in flow.assignments.items():
        for stmt in stmts:
            value = flow.value_of(stmt)
            if stmt.lineno >= before or flow.scope_of(stmt) is not scope or not isinstance(
                    value, ast.Call):
                continue
            made = call_name(value)
            if made in modules or text(value.func).startswith(("nn.", "torch.nn.")):
                found.append((stmt.lineno, name))
    return [n for _, n in sorted(found, reverse=True)]


def check_weights_never_loaded(ctx: Ctx) -> list[Candidate]:
    flow = ctx.flow
    if ctx.error is not None or flow.calls_named("load_state_dict"):
        return []
    out: list[Candidate] = []
    for stmt in flow.statements:
        if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1 or not isinstance(
                stmt.targets[0], ast.Name) or not _holds_weights(stmt.value):
            continue
        name = stmt.targets[0].id
        if _read_after(flow, name, stmt.lineno) or stmt.lineno != stmt.end_lineno:
            continue
        fixes = [Fix((Edit("insert_after", stmt.lineno, f"{model}.load_state_dict({name})"),),
                     prints_else, T(
                         f"load them into the model: `{model}.load_state_dict({name})` after "
                         f"line {stmt.lineno}",
                         f"把它们加载进模型：在第 {stmt.lineno} 行之后写 "
                         f"`{model}.load_state_dict({name})`"))
                 for model in _models(flow, stmt.lineno, flow.scope_of(stmt))[:MOST_MODELS]]
        if not fixes:
            continue
        facts: dict[str, object] = {"line": stmt.lineno, "name": name,
                                    "expr": text(stmt.value)}
        out.append(Candidate("weights-never-loaded", stmt.lineno, 0.8,
                             [("weights-unread", facts)], fixes, facts))
    return out


EXCEPTION_CHECKS: tuple[Check, ...] = ()
SILENT_CHECKS: tuple[Check, ...] = (check_weights_never_loaded,)

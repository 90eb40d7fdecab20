"""Mistakes in how a model or a sample is built that train without an error:

- modules repeated by list multiplication (``n * [Block()]``, ``[Block()] * n``): the list
  holds one module n times, so the network applies the same weights n times instead of n
  blocks of its own; a comprehension builds n;
- a BatchNorm ``momentum`` in TensorFlow's convention (0.9, 0.99: the weight of the running
  value): PyTorch's is the weight of the new batch, so the running statistics follow the last
  batch; ``1 - momentum`` is the same setting in PyTorch's convention;
- a sample drawn with ``.sample()`` from a distribution whose parameters the loss should
  train (a VAE's reparameterisation): ``sample()`` runs without a graph; ``rsample()``
  keeps it. A sample whose ``log_prob`` the program takes (REINFORCE) is meant to be
  drawn without one, and is left alone.

Each change is tried, and kept where the program then prints something else."""

from __future__ import annotations

import ast

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import Fix, replace_node
from tutor.diagnosis.flow import call_name, text
from tutor.diagnosis.verify import prints_else
from tutor.i18n import T

_NORMS = frozenset({"BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm"})
TF_MOMENTUM = 0.5
"""A BatchNorm momentum above this is TensorFlow's convention (PyTorch's default is 0.1)."""


def _module_call(node: ast.AST) -> bool:
    """A call that builds a module: a name that starts with a capital (``ResBlock(...)``,
    ``nn.Linear(...)``)."""
    return isinstance(node, ast.Call) and (call_name(node) or "")[:1].isupper()


def check_repeated_module(ctx: Ctx) -> list[Candidate]:
    if ctx.error is not None:
        return []
    out = []
    for node in ast.walk(ctx.flow.tree):
        if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult)):
            continue
        listed, count = (node.left, node.right) if isinstance(node.left, ast.List) else (
            node.right, node.left)
        if not (isinstance(listed, ast.List) and len(listed.elts) == 1
                and _module_call(listed.elts[0])) or isinstance(count, ast.List):
            continue
        built = text(listed.elts[0])
        new = f"[{built} for _ in range({text(count)})]"
        edit = replace_node(ctx.code, node, new)
        if edit is None:
            continue
        facts: dict[str, object] = {"line": node.lineno, "expr": text(node),
                                    "module": built.split("(")[0]}
        out.append(Candidate("module-list-multiplied", node.lineno, 0.8, [
            ("list-multiplied", facts)], [Fix((edit,), prints_else, T(
                f"build a new module for each place on line {node.lineno}: `{new}`",
                f"第 {node.lineno} 行为每个位置各建一个模块：`{new}`"))], facts))
    return out[:1]


def check_tensorflow_momentum(ctx: Ctx) -> list[Candidate]:
    if ctx.error is not None:
        return []
    out = []
    for call in ctx.flow.calls_named(*_NORMS):
        given = next((k for k in call.keywords if k.arg == "momentum"), None)
        value = given.value if given is not None else None
        if not (isinstance(value, ast.Constant) and isinstance(value.value, float)
                and TF_MOMENTUM < value.value < 1):
            continue
        flipped = f"{1 - value.value:.4g}"
        edit = replace_node(ctx.code, value, flipped)
        if edit is None:
            continue
        facts: dict[str, object] = {"line": call.lineno, "value": f"{value.value:g}",
                                    "new": flipped, "module": call_name(call) or "BatchNorm"}
        out.append(Candidate("batchnorm-momentum-convention", call.lineno, 0.75, [
            ("momentum-convention", facts)], [Fix((edit,), prints_else, T(
                f"give it PyTorch's momentum on line {call.lineno}: `momentum={flipped}`",
                f"第 {call.lineno} 行改用 PyTorch 约定的 momentum：`momentum={flipped}`"))],
            facts))
    return out[:1]


def check_sample_without_graph(ctx: Ctx) -> list[Candidate]:
    if ctx.error is not None:
        return []
    # a program that takes log_prob of what it samples (REINFORCE) samples without a graph
    # on purpose
    if ctx.flow.calls_named("log_prob"):
        return []
    out = []
    for call in ctx.flow.calls_named("sample"):
        func = call.func
        if not isinstance(func, ast.Attribute) or call.args or (call.keywords and any(
                k.arg != "sample_shape" for k in call.keywords)):
            continue
        edit = replace_node(ctx.code, func, f"{text(func.value)}.rsample")
        if edit is None:
            continue
        facts: dict[str, object] = {"line": call.lineno, "name": text(func.value)}
        out.append(Candidate("sample-without-graph", call.lineno, 0.75, [
            ("sampled-without-graph", facts)], [Fix((edit,), prints_else, T(
                f"draw it with `{text(func.value)}.rsample()` on line {call.lineno}",
                f"第 {call.lineno} 行改用 `{text(func.value)}.rsample()` 采样"))], facts))
    return out[:1]


EXCEPTION_CHECKS: tuple[Check, ...] = ()
SILENT_CHECKS: tuple[Check, ...] = (check_repeated_module, check_tensorflow_momentum,
                                    check_sample_without_graph)

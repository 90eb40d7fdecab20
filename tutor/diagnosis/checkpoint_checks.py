"""Weights read and never given to the model: ``state = torch.load(path)`` (or a checkpoint's
``["model"]``, a ``state_dict()`` copy) bound to a name the program never reads again, and no
``load_state_dict`` takes it, so the model keeps the weights it was built with and predicts
at random, silently. The change tried loads them into a model the program built; it is kept
only where the program then runs and prints something else than it did."""

from __future__ import annotations

import ast
import re

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import Edit, Fix, node_fix
from tutor.diagnosis.flow import Flow, call_name, receiver, text
from tutor.diagnosis.verify import prints_else, runs_clean
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


def check_checkpoint_key(ctx: Ctx) -> list[Candidate]:
    """``KeyError: 'model_state_dict'`` where the failing line indexes what ``torch.load``
    read, and the program saves a model's ``state_dict()`` itself somewhere (no dict around
    it): that file holds the weights under no key. Reading it whole is tried; the saves that
    do have the key, and the one that does not, are named."""
    if ctx.error is None or ctx.error.type != "KeyError":
        return []
    key = ctx.message.strip().strip("'\"")
    line, stmt = ctx.failing_statement()
    loaded = [node for node in ast.walk(stmt) if isinstance(node, ast.Subscript)
              and isinstance(node.slice, ast.Constant) and node.slice.value == key
              and _from_load(ctx.flow, node.value, line)] if stmt is not None else []
    saves = [c for c in ctx.flow.calls if text(c.func).endswith("torch.save") and c.args]
    bare = [c for c in saves if isinstance(c.args[0], ast.Call)
            and call_name(c.args[0]) == "state_dict"]
    keyed = [c for c in saves if isinstance(c.args[0], ast.Dict) and any(
        isinstance(k, ast.Constant) and k.value == key for k in c.args[0].keys)]
    if not loaded or not bare or key not in WEIGHT_KEYS:
        return []
    site = loaded[0]
    fill: dict[str, object] = {
        "line": bare[0].lineno, "fail_line": line, "name": key,
        "expr": text(site.value), "given": text(bare[0].args[0]),
        "detail": T(f" (line {keyed[0].lineno} saves a dict that has it)",
                    f"（第 {keyed[0].lineno} 行保存的字典里有它）") if keyed else T("", ""),
    }
    whole = node_fix(ctx.code, site, text(site.value), runs_clean, T(
        f"read the state dict itself on line {line}: `{text(site.value)}`",
        f"第 {line} 行直接读取状态字典本身：`{text(site.value)}`"))
    wrapped = f"{{{key!r}: {text(bare[0].args[0])}}}"
    same = node_fix(ctx.code, bare[0].args[0], wrapped, runs_clean, T(
        f"save it as the other checkpoints are, under '{key}', on line {bare[0].lineno}: "
        f"`{wrapped}`",
        f"第 {bare[0].lineno} 行像其他检查点一样把它存在 '{key}' 下：`{wrapped}`"))
    # where another save has the key, the bare one is the odd one out: saved alike first
    fixes = [f for f in ([same, whole] if keyed else [whole, same]) if f is not None]
    return [Candidate("checkpoint-key-missing", bare[0].lineno, 0.85, [
        ("saved-bare-state-dict", fill)], fixes, fill)]


UNEXPECTED = re.compile(r"Unexpected key\(s\) in state_dict: (?P<keys>(?:\"[^\"]*\"(?:, )?)+)")


def check_whole_checkpoint(ctx: Ctx) -> list[Candidate]:
    """``load_state_dict`` given a whole checkpoint (``{"epoch": ..., "netG_state_dict": ...,
    "optimizer_state_dict": ...}``): every model key is missing and the unexpected keys are
    the checkpoint's own, none with a dot. The checkpoint's entry that holds the model's
    weights is the change tried (the keys that read like a model's first)."""
    if ctx.error is None or "Error(s) in loading state_dict" not in ctx.message:
        return []
    found = UNEXPECTED.search(ctx.message)
    if found is None:
        return []
    keys = re.findall(r'"([^"]*)"', found["keys"])
    if not keys or any("." in k for k in keys):
        return []  # a prefix or a renamed layer: other checks' story
    line, stmt = ctx.failing_statement()
    calls = [c for c in ast.walk(stmt) if isinstance(c, ast.Call)
             and call_name(c) == "load_state_dict" and c.args] if stmt is not None else []
    if not calls:
        return []
    call = calls[0]
    given = call.args[0]
    model = receiver(call) or ""
    weights = [k for k in keys if "optim" not in k.lower() and "sched" not in k.lower()
               and (k in WEIGHT_KEYS or "state" in k.lower() or "model" in k.lower()
                    or "net" in k.lower() or (model and model.lower() in k.lower()))]
    # the key that names this model first (netG_state_dict for netG)
    weights.sort(key=lambda k: (not (model and model.lower() in k.lower()), keys.index(k)))
    fixes = [f for f in (node_fix(ctx.code, given, f"{text(given)}[{k!r}]", runs_clean, T(
        f"give it the checkpoint's model weights on line {line}: `{text(given)}[{k!r}]`",
        f"第 {line} 行把检查点中的模型权重交给它：`{text(given)}[{k!r}]`"))
        for k in weights[:2]) if f is not None]
    if not fixes:
        return []
    fill: dict[str, object] = {"line": line, "name": text(given), "model": model,
                               "detail": ", ".join(f"'{k}'" for k in keys)}
    return [Candidate("whole-checkpoint-loaded", line, 0.85, [
        ("checkpoint-keys", fill)], fixes, fill)]


def _from_load(flow: Flow, value: ast.expr, line: int) -> bool:
    """``value`` is what ``torch.load`` returned: the call itself, or a name assigned it."""
    if isinstance(value, ast.Call):
        return text(value.func).endswith("load") and "torch" in text(value.func)
    if isinstance(value, ast.Name):
        made = flow.assigned_before(value.id, line)
        got = flow.value_of(made) if made is not None else None
        return isinstance(got, ast.Call) and text(got.func).endswith("torch.load")
    return False


EXCEPTION_CHECKS: tuple[Check, ...] = (check_checkpoint_key, check_whole_checkpoint)
SILENT_CHECKS: tuple[Check, ...] = (check_weights_never_loaded,)

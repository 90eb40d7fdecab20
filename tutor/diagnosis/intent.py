"""What the learner's program means to train and what it means to keep frozen, read from its
source: the parameters its optimizers are given, and those its freezing code turns
``requires_grad`` off for (misspelt too: ``param.require_grad = False`` does nothing, yet it
says what was meant).

A tried fix must keep this intent (:func:`tutor.diagnosis.verify.hides_bug`): giving the
optimizer every parameter makes "the optimizer does not hold them" go away, and trains the
layers the program meant to freeze.
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import re
from dataclasses import dataclass

from tutor.diagnosis.flow import Flow, call_name, receiver, target_names, text

REQUIRES_GRAD = "requires_grad"
PARAMETER_LISTS = frozenset({"parameters", "named_parameters"})


def spells_requires_grad(attr: str) -> bool:
    """``requires_grad`` or a near miss of it (``require_grad``, ``requires_grads``)."""
    return attr == REQUIRES_GRAD or bool(
        difflib.get_close_matches(attr, [REQUIRES_GRAD], n=1, cutoff=0.85))


@dataclass(frozen=True)
class Freeze:
    """A statement that turns ``requires_grad`` off for the parameters under ``prefix``."""

    line: int
    prefix: str
    """The module or tensor as the source names it (``vgg16.features``, ``self.fc``): the
    parameters lying under it (:func:`under`) are the frozen ones."""
    spelled: str
    """The attribute as written: ``requires_grad``, or the misspelling that does nothing."""
    sure: bool = True
    """False when a condition picks which of the parameters it freezes."""

    @property
    def misspelt(self) -> bool:
        return self.spelled != REQUIRES_GRAD


def _bare(name: str) -> str:
    """A source path as the run names it: ``model[0]`` -> ``model.0``, without ``self.``."""
    return re.sub(r"\[(\d+)\]", r".\1", name).removeprefix("self.")


def under(name: str, prefix: str) -> bool:
    """The parameter the run names ``name`` (``vgg16.features.0.weight``) lies under the
    module or tensor the source names ``prefix`` (``vgg16.features``, ``self.features``)."""
    name, prefix = "." + _bare(name), "." + _bare(prefix)
    return name.endswith(prefix) or prefix + "." in name + "."


@dataclass(frozen=True)
class Intent:
    frozen: tuple[Freeze, ...] = ()
    trained: tuple[str, ...] | None = None
    """What the optimizers are given, as source names; None when some optimizer's
    parameters cannot be read from the source."""
    grads_read: tuple[str, ...] = ()
    """What the program reads ``.grad`` of (``m.top.weight.grad``): it wants a gradient there,
    whatever a freeze says."""

    def freeze_of(self, name: str) -> Freeze | None:
        """The freeze the program surely meant for the parameter: none under a condition,
        none that a read of the gradient of one of its parameters contradicts."""
        return next((f for f in self.frozen if f.sure and under(name, f.prefix) and not any(
            under(read, f.prefix) or under(f.prefix, read) for read in self.grads_read)), None)

    def may_freeze(self, name: str) -> bool:
        """Some freeze of the program may be meant for it (under a condition too)."""
        return any(under(name, f.prefix) for f in self.frozen)

    def trains(self, name: str) -> bool | None:
        """Whether an optimizer of the program is given the parameter; None: not known."""
        if self.trained is None:
            return None
        return any(under(name, p) for p in self.trained)


def _loop_over_parameters(flow: Flow, stmt: ast.stmt, name: str
                          ) -> tuple[ast.For, bool] | None:
    """The ``for p in X.parameters()`` (or ``for n, p in X.named_parameters()``) that binds
    ``name`` around ``stmt``, and whether no condition stands between them (a condition
    picks some of the parameters, and which ones cannot be read)."""
    sure = True
    for node in flow.ancestors(stmt):
        if isinstance(node, ast.If):
            sure = False
        if isinstance(node, ast.For) and name in target_names(node.target) and isinstance(
                node.iter, ast.Call) and call_name(node.iter) in PARAMETER_LISTS:
            return node, sure
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return None
    return None


def _frozen_by(flow: Flow, stmt: ast.stmt) -> list[Freeze]:
    """What ``stmt`` freezes, once for each name its callers give the frozen module (a
    helper ``freeze(model)`` called as ``freeze(vgg)`` freezes ``vgg``'s parameters)."""
    found = _freeze_in_source(flow, stmt)
    if found is None:
        return []
    return [dataclasses.replace(found, prefix=owner)
            for owner in flow.as_called(stmt, found.prefix)]


def _freeze_in_source(flow: Flow, stmt: ast.stmt) -> Freeze | None:
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(
            stmt.targets[0], ast.Attribute) and isinstance(stmt.value, ast.Constant) and \
            stmt.value.value is False:
        target = stmt.targets[0]
        owner, spelled = text(target.value), target.attr
    elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and call_name(
            stmt.value) == "requires_grad_" and stmt.value.args and isinstance(
            stmt.value.args[0], ast.Constant) and stmt.value.args[0].value is False:
        owner, spelled = receiver(stmt.value) or "", "requires_grad_"
    else:
        return None
    if not owner or not spells_requires_grad(spelled.rstrip("_")):
        return None
    found = _loop_over_parameters(flow, stmt, owner)
    sure = not any(isinstance(a, ast.If) for a in flow.ancestors(stmt)[:1])
    if found is not None:
        loop, sure = found
        assert isinstance(loop.iter, ast.Call)
        owner = receiver(loop.iter) or ""
    elif owner.isidentifier() and flow.assignments.get(owner) and all(
            isinstance(s, ast.For) for s in flow.assignments[owner]):
        return None  # a loop variable over something else: what it freezes is not known
    return Freeze(stmt.lineno, owner, spelled.rstrip("_"), sure) if owner else None


def _given(flow: Flow, node: ast.expr, depth: int = 2) -> list[str] | None:
    """The source names of what an optimizer's first argument holds: ``model`` for
    ``model.parameters()``, ``w`` and ``b`` for ``[w, b]``, each group's for a list of
    dicts; None when it cannot be read."""
    if isinstance(node, ast.Call) and call_name(node) in PARAMETER_LISTS:
        owner = receiver(node)
        return [owner] if owner else None
    if isinstance(node, ast.Call) and node.args:  # list(...), chain(...), filter(f, ...)
        parts = [_given(flow, a, depth) for a in node.args if not isinstance(a, ast.Lambda)]
        return None if not parts or any(p is None for p in parts) else \
            [n for p in parts if p for n in p]
    if isinstance(node, (ast.List, ast.Tuple)):
        parts = [_given(flow, e, depth) for e in node.elts]
        return None if any(p is None for p in parts) else [n for p in parts if p for n in p]
    if isinstance(node, ast.Dict):
        value = next((v for k, v in zip(node.keys, node.values, strict=True)
                      if isinstance(k, ast.Constant) and k.value == "params"), None)
        return _given(flow, value, depth) if value is not None else None
    if isinstance(node, (ast.Name, ast.Attribute)):
        name = text(node)
        made = flow.assignments.get(name, [])
        if depth > 0 and len(made) == 1 and isinstance(made[0], ast.Assign):
            found = _given(flow, made[0].value, depth - 1)
            if found is not None:
                return found
        return [name] if made and isinstance(made[0], ast.Assign) else None
    return None


_FLAG_RE = re.compile(r"^(?:freeze|frozen|fix|fixed|lock)_(?P<a>\w+)$"
                      r"|^(?P<b>\w+)_(?:frozen|fixed)$")


@dataclass(frozen=True)
class FreezeFlag:
    stored: ast.Assign
    """``self.freeze_backbone = freeze_backbone`` in ``__init__``."""
    flag: str
    part: str
    """The attribute of the part it names (``backbone``), built in the same ``__init__``."""


def freeze_flags(flow: Flow) -> list[FreezeFlag]:
    """The freezing flags the classes of the program store for a part they build
    (``self.freeze_backbone = ...`` beside ``self.backbone = ...``): a part the program may
    mean to freeze, whether or not anything acts on the flag."""
    found = []
    for cls in (n for n in ast.walk(flow.tree) if isinstance(n, ast.ClassDef)):
        init = next((f for f in cls.body if isinstance(f, ast.FunctionDef)
                     and f.name == "__init__"), None)
        if init is None:
            continue
        built = {t.attr for s in ast.walk(init) if isinstance(s, ast.Assign)
                 for t in s.targets if isinstance(t, ast.Attribute)
                 and isinstance(t.value, ast.Name) and t.value.id == "self"}
        for stmt in ast.walk(init):
            if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
                continue
            target = stmt.targets[0]
            if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                    and target.value.id == "self"):
                continue
            match = _FLAG_RE.match(target.attr)
            part = (match.group("a") or match.group("b")) if match else None
            if part is None:
                continue
            named = part if part in built else next(
                (b for b in sorted(built) if b.rstrip("s") == part.rstrip("s")), None)
            if named is not None and named != target.attr:
                found.append(FreezeFlag(stmt, target.attr, named))
    return found


def read_intent(flow: Flow | None) -> Intent:
    """The program's intent as its source states it (empty when it cannot be parsed)."""
    if flow is None:
        return Intent()
    frozen = tuple(f for s in flow.statements for f in _frozen_by(flow, s)) + tuple(
        Freeze(flag.stored.lineno, f"self.{flag.part}", REQUIRES_GRAD, sure=False)
        for flag in freeze_flags(flow))
    trained: list[str] | None = []
    for stmt, _, call in flow.optimizers():
        given = _given(flow, call.args[0]) if call.args else None
        if given is None or trained is None:
            trained = None
            continue
        trained.extend(name for source in given for name in flow.as_called(stmt, source))
    reads = tuple(dict.fromkeys(text(n.value) for n in ast.walk(flow.tree)
                                if isinstance(n, ast.Attribute) and n.attr == "grad"
                                and isinstance(n.ctx, ast.Load)))
    return Intent(frozen, tuple(trained) if trained is not None else None, reads)

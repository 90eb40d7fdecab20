"""Silent pitfalls: mistakes that raise nothing, found on the syntax tree alone.

Each rule returns hits ``(line, variable)``; the catalog entry with the same ``pitfall`` name
supplies the text. The rules prefer silence to a guess: a false alarm teaches the wrong thing.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from tutor.diagnosis.source import (
    INPLACE_UPDATE_METHODS,
    Source,
    call_name,
    dotted,
    source_text,
)

FACTORIES = frozenset(
    {"tensor", "ones", "zeros", "randn", "rand", "empty", "full", "arange", "linspace", "eye",
     "ones_like", "zeros_like", "randn_like", "rand_like", "full_like", "empty_like",
     "Parameter", "from_numpy", "as_tensor", "normal", "randint"}
)
DETACHING = frozenset({"detach", "item", "tolist", "numpy", "requires_grad_", "to"})
TENSOR_ATTRS = frozenset({"grad", "weight", "bias"})


@dataclass(frozen=True)
class Hit:
    line: int
    variable: str | None


def _walk_no_defs(node: ast.AST) -> Iterator[ast.AST]:
    """Walk a loop body without entering nested function or class definitions."""
    stack = list(ast.iter_child_nodes(node))
    while stack:
        current = stack.pop()
        if isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        yield current
        stack.extend(ast.iter_child_nodes(current))


def _method_calls(node: ast.AST, name: str) -> list[ast.Call]:
    return [
        n for n in _walk_no_defs(node)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == name
    ]


def _reads_grad(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr == "grad" for n in ast.walk(node))


def _has_update(loop: ast.AST) -> bool:
    """An optimiser step, or a hand-written update of a tensor from its ``.grad``."""
    if _method_calls(loop, "step"):
        return True
    for n in _walk_no_defs(loop):
        if isinstance(n, ast.AugAssign) and _reads_grad(n.value):
            return True
        if (
            isinstance(n, ast.Call)
            and call_name(n) in INPLACE_UPDATE_METHODS
            and isinstance(n.func, ast.Attribute)
            and any(_reads_grad(a) for a in n.args)
        ):
            return True
        if isinstance(n, ast.Assign) and _reads_grad(n.value) and any(
            isinstance(t, ast.Attribute) and t.attr == "data" for t in n.targets
        ):
            return True
    return False


def _uses_grad_values(loop: ast.AST) -> bool:
    """The loop does something with a ``.grad`` besides printing it (a demo of accumulation
    prints; recording or updating uses the value)."""
    printed: set[ast.AST] = set()
    for n in _walk_no_defs(loop):
        if isinstance(n, ast.Call) and call_name(n) == "print":
            printed.update(ast.walk(n))
    return any(
        isinstance(n, ast.Attribute) and n.attr == "grad" and isinstance(n.ctx, ast.Load)
        and n not in printed
        for n in _walk_no_defs(loop)
    )


def _clears_grads(loop: ast.AST) -> bool:
    if _method_calls(loop, "zero_grad"):
        return True
    for n in _walk_no_defs(loop):
        # w.grad.zero_(), w.grad.data.zero_(), w.grad = None
        if isinstance(n, ast.Call) and call_name(n) in {"zero_", "fill_"} and _reads_grad(n.func):
            return True
        if isinstance(n, ast.Assign) and any(
            isinstance(t, ast.Attribute) and t.attr == "grad" for t in n.targets
        ):
            return True
        if isinstance(n, ast.Call) and call_name(n) == "grad" and dotted(n.func) in {
            "torch.autograd.grad", "autograd.grad"
        }:
            return True  # autograd.grad does not accumulate into .grad
    return False


def missing_zero_grad(source: Source) -> list[Hit]:
    hits: list[Hit] = []
    for loop in ast.walk(source.tree):
        if not isinstance(loop, (ast.For, ast.While)):
            continue
        backwards = _method_calls(loop, "backward")
        if not backwards or _clears_grads(loop):
            continue
        if not (_has_update(loop) or _uses_grad_values(loop)):
            continue
        # report in the innermost loop only
        inner = [b for b in backwards if source.enclosing_loop(b) is loop]
        if not inner:
            continue
        call = inner[0]
        receiver = source_text(call.func.value) if isinstance(call.func, ast.Attribute) else None
        hits.append(Hit(call.lineno, receiver))
    return hits


def _grad_names(source: Source) -> set[str]:
    """Names that hold tensors requiring grad: made with ``requires_grad=True``,
    ``nn.Parameter`` or ``requires_grad_()``, and what is computed from them."""
    names: set[str] = set()
    for node in ast.walk(source.tree):
        if isinstance(node, ast.Assign):
            value = node.value
            if any(
                isinstance(k, ast.keyword) and k.arg == "requires_grad"
                and not (isinstance(k.value, ast.Constant) and k.value.value is False)
                for k in ast.walk(value)
            ) or any(isinstance(c, ast.Call) and call_name(c) in {"Parameter", "requires_grad_"}
                     for c in ast.walk(value)):
                names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.Call) and call_name(node) == "requires_grad_":
            owner = dotted(node.func.value) if isinstance(node.func, ast.Attribute) else None
            if owner and owner.isidentifier():
                names.add(owner)
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Attribute) and t.attr == "requires_grad":
                    owner = dotted(t.value)
                    if owner and owner.isidentifier():
                        names.add(owner)
    return names


def _is_leaf_maker(value: ast.expr) -> bool:
    if isinstance(value, ast.Call):
        name = call_name(value)
        if name in FACTORIES or name in DETACHING or (name == "clone" and _detaches(value)):
            return True
    return False


def _makes_grad_leaf_inside(value: ast.expr) -> bool:
    """``torch.randn(3, requires_grad=True) * 0.01``: a leaf is made, then used."""
    return any(
        isinstance(k, ast.keyword) and k.arg == "requires_grad"
        and isinstance(k.value, ast.Constant) and k.value.value is True
        for k in ast.walk(value)
    )


def _detaches(value: ast.expr) -> bool:
    return any(isinstance(c, ast.Call) and call_name(c) == "detach" for c in ast.walk(value))


def nonleaf_grad_read(source: Source) -> list[Hit]:
    grad_names = _grad_names(source)
    non_leaf: dict[str, ast.Assign] = {}
    # propagate: anything computed (not freshly made) from a grad name is a non-leaf
    assigns = sorted(
        (n for n in ast.walk(source.tree) if isinstance(n, ast.Assign)), key=lambda n: n.lineno
    )
    for node in assigns:
        targets = [t.id for t in node.targets if isinstance(t, ast.Name)]
        if not targets:
            continue
        used = {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)}
        if (
            (used & (grad_names | set(non_leaf)) or _makes_grad_leaf_inside(node.value))
            and not _is_leaf_maker(node.value)
            and not _detaches(node.value)
            and not source.in_no_grad(node)
        ):
            for t in targets:
                non_leaf[t] = node
        else:
            for t in targets:
                non_leaf.pop(t, None)
    retained = {
        dotted(c.func.value)
        for c in ast.walk(source.tree)
        if isinstance(c, ast.Call) and call_name(c) == "retain_grad"
        and isinstance(c.func, ast.Attribute)
    }
    hits: list[Hit] = []
    for attr in ast.walk(source.tree):
        if (
            isinstance(attr, ast.Attribute)
            and attr.attr == "grad"
            and isinstance(attr.ctx, ast.Load)
            and isinstance(attr.value, ast.Name)
        ):
            name = attr.value.id
            made = non_leaf.get(name)
            if made is None or name in retained or made.lineno > attr.lineno:
                continue
            if name in _leaf_reassigned_between(source, name, made.lineno, attr.lineno):
                continue
            hits.append(Hit(attr.lineno, name))
    return _first_per_line(hits)


def _leaf_reassigned_between(source: Source, name: str, start: int, end: int) -> set[str]:
    for stmt, value in source.assignments_to(name):
        if start < stmt.lineno < end and _is_leaf_maker(value):
            return {name}
    return set()


NON_TENSOR_RESULTS = frozenset(
    {"item", "tolist", "numpy", "len", "float", "int", "str", "bool", "print", "size", "dim",
     "numel", "list", "tuple", "dict", "range"}
)


def _tensor_names(source: Source) -> set[str]:
    """Names that hold tensors: made by torch or as parameters, and what is computed from
    them (in line order), unless the outermost call turns the result into something else."""
    names = _grad_names(source) | _factory_names(source) | _param_loop_names(source)
    assigns = sorted(
        (n for n in ast.walk(source.tree) if isinstance(n, ast.Assign)), key=lambda n: n.lineno
    )
    for node in assigns:
        value = node.value
        if isinstance(value, ast.Call) and call_name(value) in NON_TENSOR_RESULTS:
            continue
        used = {n.id for n in ast.walk(value) if isinstance(n, ast.Name)}
        if used & names and isinstance(value, (ast.BinOp, ast.Call, ast.UnaryOp, ast.Subscript)):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def data_attribute(source: Source) -> list[Hit]:
    tensors = _tensor_names(source)
    shown = _only_shown(source.tree)
    applied = {dotted(a) for c in ast.walk(source.tree) if isinstance(c, ast.Call)
               and call_name(c) == "apply" for a in c.args}
    hits: list[Hit] = []
    for node in ast.walk(source.tree):
        if not (isinstance(node, ast.Attribute) and node.attr == "data") or id(node) in shown:
            continue
        owner = node.value
        # a gradient's values, a weight updated after backward(), or one set up by an init
        # function before any pass: no graph it could corrupt
        if (isinstance(owner, ast.Attribute) and owner.attr == "grad") or _manual_update(
                source, node) or _read_by_update(source, node) or _initialises(
                source, node, applied):
            continue
        owner_name = dotted(owner)
        tensorish = (
            isinstance(owner, ast.Attribute) and owner.attr in TENSOR_ATTRS
        ) or (isinstance(owner, ast.Name) and owner.id in tensors)
        if tensorish:
            hits.append(Hit(node.lineno, owner_name))
    return _first_per_line(hits)


INIT_FUNCTION = re.compile(r"init|reset", re.IGNORECASE)


def _initialises(source: Source, node: ast.Attribute, applied: set[str | None]) -> bool:
    """``m.weight.data.normal_(0, 0.01)`` (or ``nn.init.xavier_uniform_(m.weight.data)``,
    ``w.data = ...``) in an ``__init__``, an init/reset function or one given to
    ``.apply()``: the old idiom for setting a parameter's starting values, which runs before
    any graph exists and so corrupts none."""
    function = next((a for a in source.ancestors(node)
                     if isinstance(a, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if function is None:
        return False
    if not (INIT_FUNCTION.search(function.name) or function.name in applied):
        return False
    parent = source.parents.get(node)
    return (isinstance(parent, ast.Attribute) and parent.attr.endswith("_")
            and isinstance(source.parents.get(parent), ast.Call)) or (
        isinstance(parent, ast.Assign) and node in parent.targets) or (
        isinstance(parent, ast.Call) and node in parent.args
        and call_name(parent).endswith("_") and "init" in (dotted(parent.func) or ""))


def _read_by_update(source: Source, node: ast.Attribute) -> bool:
    """``w.data`` read on the right of ``w.data = w.data - lr * w.grad``: part of the manual
    update :func:`_manual_update` lets be."""
    stmt = next((a for a in source.ancestors(node) if isinstance(a, ast.stmt)), None)
    if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
        return False
    target = stmt.targets[0]
    return isinstance(target, ast.Attribute) and target.attr == "data" and dotted(
        target.value) == dotted(node.value) and _manual_update(source, target)


def _manual_update(source: Source, node: ast.Attribute) -> bool:
    """``w.data -= lr * w.grad`` (or ``w.data.zero_()``, ``w.data = ...``) under no_grad or
    after a backward() of its loop: an update of the weights between two passes, which no
    graph records. Writing ``.data`` between a forward pass and its backward() is the harm."""
    parent = source.parents.get(node)
    written = (isinstance(parent, ast.AugAssign) and parent.target is node) or (
        isinstance(parent, ast.Assign) and node in parent.targets) or (
        isinstance(parent, ast.Attribute) and parent.attr.endswith("_")
        and isinstance(source.parents.get(parent), ast.Call))
    if not written:
        return False
    if source.in_no_grad(node):
        return True
    scope = source.enclosing_loop(node) or source.tree
    before = [n.lineno for n in ast.walk(scope) if isinstance(n, ast.Call)
              and call_name(n) == "backward" and n.lineno < node.lineno]
    if not before:
        return False
    # used in a computation after that backward(): a forward pass whose backward() is yet
    # to come reads what the write changes
    owner = dotted(node.value)
    return not any(isinstance(n, (ast.Name, ast.Attribute)) and dotted(n) == owner
                   and isinstance(source.parents.get(n), ast.BinOp | ast.Call)
                   and max(before) < n.lineno < node.lineno for n in ast.walk(scope))


PURE_METHODS = frozenset({
    "detach", "clone", "view", "view_as", "reshape", "reshape_as", "squeeze", "unsqueeze",
    "transpose", "permute", "contiguous", "flatten", "expand", "expand_as", "softmax",
    "log_softmax", "argmax",
})
"""Tensor methods that return a new value and change nothing, with names a learner's own
class seldom uses: a line that only calls one throws the result away."""
TENSOR_ONLY_PURE = frozenset({
    "to", "cuda", "cpu", "float", "double", "half", "type", "long", "int", "bool", "t",
    "repeat", "abs", "exp", "log", "sqrt", "sigmoid", "tanh", "mean", "numpy", "tolist",
    "item",
})
"""Pure for a tensor, but in place for a module (``model.to(device)`` moves the model
itself) or a name a learner's own class may use (``logger.log(loss)``): counted where the
receiver is a name that holds a tensor."""


def result_discarded(source: Source) -> list[Hit]:
    """A statement that only computes (``next_q.detach()``, ``x - self.fc(x)``): the value
    is thrown away and nothing changes."""
    # a name built by a class (``nn.Linear(...)``, ``Net()``) holds a module or an object
    built = {t.id for n in ast.walk(source.tree) if isinstance(n, ast.Assign)
             and isinstance(n.value, ast.Call) and call_name(n.value)[:1].isupper()
             for t in n.targets if isinstance(t, ast.Name)}
    tensors = _tensor_names(source) - built
    hits: list[Hit] = []
    for stmt in ast.walk(source.tree):
        if not isinstance(stmt, ast.Expr):
            continue
        value = stmt.value
        if isinstance(value, (ast.BinOp, ast.Compare)) and isinstance(
                value.left, (ast.Name, ast.Attribute, ast.Subscript)):
            hits.append(Hit(stmt.lineno, dotted(value.left)))
        elif isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
            name, owner = value.func.attr, value.func.value
            if name in PURE_METHODS or (name in TENSOR_ONLY_PURE and isinstance(owner, ast.Name)
                                        and owner.id in tensors):
                hits.append(Hit(stmt.lineno, dotted(owner)))
    return _first_per_line(hits)


def _only_shown(tree: ast.AST) -> set[int]:
    """The nodes inside a ``print(...)`` or an f-string: values read to be shown, which
    change nothing autograd sees (``print(outputs.data)`` is harmless)."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr) or (
                isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id == "print"):
            inside.update(id(n) for n in ast.walk(node))
    return inside


def _factory_names(source: Source) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(source.tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            func = node.value.func
            root = (dotted(func) or "").split(".")[0]
            if root == "torch" or call_name(node.value) in FACTORIES:
                names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def _param_loop_names(source: Source) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(source.tree):
        if (
            isinstance(node, ast.For)
            and isinstance(node.iter, ast.Call)
            and call_name(node.iter) in {"parameters", "named_parameters"}
        ):
            names.update(n.id for n in ast.walk(node.target) if isinstance(n, ast.Name))
    return names


def backward_in_no_grad(source: Source) -> list[Hit]:
    hits = []
    for node in ast.walk(source.tree):
        if isinstance(node, ast.Call) and call_name(node) == "backward" and source.in_no_grad(node):
            func = node.func
            receiver = source_text(func.value) if isinstance(func, ast.Attribute) else None
            hits.append(Hit(node.lineno, receiver))
    return hits


def requires_grad_too_late(source: Source) -> list[Hit]:
    hits: list[Hit] = []
    blocks = [n.body for n in ast.walk(source.tree) if hasattr(n, "body")
              and isinstance(n.body, list)]
    for body in blocks:
        for i, stmt in enumerate(body):
            name = _enabled_requires_grad(stmt)
            if name is None:
                continue
            produced = [
                t.id
                for earlier in body[:i]
                if isinstance(earlier, ast.Assign)
                and any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(earlier.value))
                and not _detaches(earlier.value)
                for t in earlier.targets
                if isinstance(t, ast.Name) and t.id != name
            ]
            later = body[i + 1:]
            used_later = {
                n.id for s in later for n in ast.walk(s)
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
            }
            reassigned = {
                t.id for s in later if isinstance(s, ast.Assign)
                for t in s.targets if isinstance(t, ast.Name)
            }
            if any(p in used_later and p not in reassigned for p in produced):
                hits.append(Hit(stmt.lineno, name))
    return hits


def _enabled_requires_grad(stmt: ast.stmt) -> str | None:
    """``x`` for ``x.requires_grad = True`` or ``x.requires_grad_()`` (not ``(False)``)."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        target = stmt.targets[0]
        if (
            isinstance(target, ast.Attribute)
            and target.attr == "requires_grad"
            and isinstance(stmt.value, ast.Constant)
            and stmt.value.value is True
        ):
            return dotted(target.value)
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        call = stmt.value
        if call_name(call) == "requires_grad_" and isinstance(call.func, ast.Attribute):
            if call.args and not (isinstance(call.args[0], ast.Constant) and call.args[0].value):
                return None
            return dotted(call.func.value)
    return None


def _loops_of(source: Source, node: ast.AST) -> list[ast.For | ast.While]:
    """The loops around ``node`` in its own function, innermost first."""
    loops: list[ast.For | ast.While] = []
    for a in source.ancestors(node):
        if isinstance(a, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            break
        if isinstance(a, (ast.For, ast.While)):
            loops.append(a)
    return loops


def _inside(line: int, node: ast.stmt) -> bool:
    return node.lineno <= line <= (node.end_lineno or node.lineno)


def _steps_between(source: Source, made: ast.stmt, used: int, steps: list[int]) -> bool:
    """Whether an optimizer step can run after ``made`` and before line ``used``: between
    them in the text, or anywhere in a loop around ``made`` that ``used`` is outside of (or
    comes before ``made`` in: the next pass steps first)."""
    if any(made.lineno < s < used for s in steps):
        return True
    for loop in _loops_of(source, made):
        if not _inside(used, loop) or used < made.lineno:
            return any(_inside(s, loop) for s in steps)
    return False


def state_dict_value(value: ast.expr) -> bool:
    """``m.state_dict()``, or a shallow copy of it (``.copy()``, ``dict(...)``,
    ``OrderedDict(...)``): a dict of the live parameters."""
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    if isinstance(func, ast.Attribute) and func.attr in ("state_dict", "copy"):
        if value.args or value.keywords:
            return False
        return func.attr == "state_dict" or state_dict_value(func.value)
    return call_name(value) in ("dict", "OrderedDict") and len(value.args) == 1 \
        and state_dict_value(value.args[0])


def state_dict_kept(source: Source) -> list[Hit]:
    """``best = model.state_dict()`` kept while training goes on and loaded, saved or
    returned later: the dict holds the parameters themselves, not a copy, so every later
    optimizer step changes it too and "the best weights" are the last ones."""
    steps = [c.lineno for c in ast.walk(source.tree) if isinstance(c, ast.Call)
             and call_name(c) == "step" and not c.args
             and "sched" not in source_text(c.func).lower()]
    if not steps or not any(isinstance(n, ast.Call) and call_name(n) == "backward"
                            for n in ast.walk(source.tree)):
        return []
    uses: dict[str, list[int]] = {}
    for node in ast.walk(source.tree):
        if isinstance(node, ast.Call) and call_name(node) in ("load_state_dict", "save"):
            for arg in node.args[:1]:
                uses.setdefault(dotted(arg) or "", []).append(node.lineno)
        elif isinstance(node, ast.Return) and node.value is not None:
            uses.setdefault(dotted(node.value) or "", []).append(node.lineno)
    hits: list[Hit] = []
    for stmt in ast.walk(source.tree):
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                and state_dict_value(stmt.value)):
            continue
        name = dotted(stmt.targets[0])
        if name and any(_steps_between(source, stmt, line, steps)
                        for line in uses.get(name, [])):
            hits.append(Hit(stmt.lineno, name))
    return _first_per_line(hits)


_CENTRE = ("mean", "avg", "average", "mu", "min", "minimum", "mn")
_SCALE = ("std", "sigma", "stdev", "scale", "max", "maximum", "range", "var", "sd")


def _named_like(node: ast.expr, words: tuple[str, ...]) -> bool:
    """Whether a word of ``node``'s names is one of ``words`` (``x.mean()``, ``self.mu``,
    ``x_min``; not ``mult`` or ``admin``)."""
    parts = set(re.findall(r"[a-z]+", source_text(node).lower()))
    return not isinstance(node, ast.Constant) and bool(parts & set(words))


def _constants_like(centre: ast.expr, scale: ast.expr) -> bool:
    """``127.5 / 128.0``, ``0.5 / 0.5``, ``0.1307 / 0.3081``: a centre and a scale written as
    numbers (a float among them, of the same order), not a fraction such as ``1 / 3``."""
    values = [n.value for n in (centre, scale) if isinstance(n, ast.Constant)
              and isinstance(n.value, (int, float)) and not isinstance(n.value, bool)]
    if len(values) != 2 or not any(isinstance(v, float) for v in values) or min(values) <= 0:
        return False
    return 0.1 <= values[0] / values[1] <= 2


def normalize_precedence(source: Source) -> list[Hit]:
    """``x - mean / std``: ``/`` binds tighter than ``-``, so only the mean is divided and
    the data is shifted, not scaled (also ``x - x.min() / (x.max() - x.min())`` and
    ``x - 127.5 / 128.0``)."""
    hits: list[Hit] = []
    for node in ast.walk(source.tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub) and isinstance(
                node.right, ast.BinOp) and isinstance(node.right.op, ast.Div):
            centre, scale = node.right.left, node.right.right
            if (_named_like(centre, _CENTRE) and _named_like(scale, _SCALE)) or (
                    not isinstance(node.left, ast.Constant) and _constants_like(centre, scale)):
                hits.append(Hit(node.lineno, source_text(node.left)))
    return _first_per_line(hits)


def _first_per_line(hits: list[Hit]) -> list[Hit]:
    seen: set[int] = set()
    out = []
    for hit in sorted(hits, key=lambda h: h.line):
        if hit.line not in seen:
            seen.add(hit.line)
            out.append(hit)
    return out


RULES: dict[str, Callable[[Source], list[Hit]]] = {
    "result-discarded": result_discarded,
    "missing-zero-grad": missing_zero_grad,
    "data-attribute": data_attribute,
    "nonleaf-grad-read": nonleaf_grad_read,
    "backward-in-no-grad": backward_in_no_grad,
    "requires-grad-too-late": requires_grad_too_late,
    "state-dict-kept": state_dict_kept,
    "normalize-precedence": normalize_precedence,
}

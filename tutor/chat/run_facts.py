"""Why pasted code prints what it prints: the facts of its own run, in the learner's names.

A "what does this print, and why is ``a.grad`` None?" question is answered from the run of
the learner's snippet, not from a topic's summary. :func:`watch` writes the snippet again with
a record in front of every statement that reads ``NAME.grad`` (whether ``NAME`` is a leaf,
whether it requires grad, what made it, whether its ``.grad`` is None, how many
``backward()`` calls ran before) and a count in front of every ``backward()``; each record
goes on the statement's own line, so line numbers stay the learner's. The records come back
as a probe of that second run; :func:`explain` joins them with the source (which line bound
the name, whether it rebound it or hid the leaf inside an expression, whether ``backward``
was given a gradient) and words the facts in ``facts.yaml``.

What the run reports is the learner's claim like anything a run says: it only explains the
learner's own code to the learner. Only the source and those records are read; nothing here
imports torch.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from tutor import syntax_tree
from tutor.i18n import Lang, Text

DATA = Path(__file__).with_name("facts.yaml")
SEEN = "__tutor_seen"
BACKWARDS = "__tutor_backwards"
PROBE = f"{SEEN}[:12] + {SEEN}[12:][-12:]"
"""The records a run reports: the first reads of ``.grad`` and the last ones (a loop's)."""
_COMPOUND = (
    ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try,
    ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Match,
)
_LEAF_MAKERS = frozenset({"requires_grad_", "Variable", "Parameter"})


@dataclass(frozen=True)
class Backward:
    line: int
    call: str
    """The call as written (``out.backward(retain_graph=True)``)."""
    output: str | None
    """What it is called on, as written (``out``), when it is a plain expression."""
    with_gradient: bool
    """It passes a gradient (``y.backward(v)``): a vector-Jacobian product."""


@dataclass(frozen=True)
class Binding:
    line: int
    statement: str
    rebinds: bool
    """The right side reads the name itself (``x1 = x1.view(-1, 1)``)."""
    hides_leaf: bool
    """The leaf is made inside the right side and never named (``torch.tensor(5.,
    requires_grad=True) * 0.1``, ``torch.ones(2, requires_grad=True).cuda()``)."""
    under: str | None = None
    """The block that switches recording off around it (``torch.no_grad()``), as written."""
    taken_out: str | None = None
    """How the value leaves the graph (``.detach()``, ``.data``), when it does."""
    made: bool = False
    """A constructor makes it from values, without ``requires_grad=True``."""
    creates_leaf: bool = False
    """The right side is itself a leaf made to require grad (``torch.ones(3,
    requires_grad=True)``, ``nn.Parameter(...)``, ``t.requires_grad_()``)."""


@dataclass(frozen=True)
class Watched:
    code: str
    """The snippet with its records, line for line the learner's."""
    names: tuple[str, ...]
    """The names whose ``.grad`` (or ``requires_grad``, ``is_leaf``, ``grad_fn``) it reads."""
    backwards: tuple[Backward, ...]
    bindings: dict[str, tuple[Binding, ...]]
    flags: frozenset[tuple[int, str]] = frozenset()
    """(line, name) where the code reads ``name.requires_grad``, ``.is_leaf`` or ``.grad_fn``
    (and not its ``.grad``: those lines are in ``grads``)."""
    grads: frozenset[tuple[int, str]] = frozenset()
    """(line, name) where the code reads ``name.grad``."""


@dataclass(frozen=True)
class Seen:
    """One tensor where the code read its ``.grad``."""

    line: int
    name: str
    is_leaf: bool | None
    requires_grad: bool | None
    grad_fn: str | None
    grad_none: bool
    backwards: int
    """``backward()`` calls run before this read."""


def _source(code: str, node: ast.AST) -> str:
    return " ".join((ast.get_source_segment(code, node) or "").split())


def _grad_reads(statement: ast.stmt, attrs: frozenset[str] = frozenset({"grad"})
                ) -> list[str]:
    """The names whose ``.grad`` (or another of ``attrs``) the statement reads, in order,
    once each."""
    found: list[str] = []
    for node in ast.walk(statement):
        if (
            isinstance(node, ast.Attribute)
            and node.attr in attrs
            and isinstance(node.ctx, ast.Load)
            and isinstance(node.value, ast.Name)
            and node.value.id not in found
        ):
            found.append(node.value.id)
    return found


FLAGS = frozenset({"requires_grad", "is_leaf", "grad_fn"})
_OFF = ("no_grad", "inference_mode", "set_grad_enabled(False)")
_MAKERS = frozenset({"tensor", "Tensor", "FloatTensor", "DoubleTensor", "LongTensor",
                     "as_tensor", "from_numpy", "zeros", "ones", "rand", "randn", "empty",
                     "full", "arange", "linspace", "zeros_like", "ones_like", "rand_like",
                     "randn_like", "full_like", "eye"})


def _recording_off(code: str, tree: ast.AST) -> dict[int, str]:
    """Statement (by id) -> the block that switches recording off around it, as written: a
    ``with torch.no_grad():`` block, or a function decorated with it."""
    out: dict[int, str] = {}
    for node in ast.walk(tree):
        switches: list[str] = []
        body: list[ast.stmt] = []
        if isinstance(node, (ast.With, ast.AsyncWith)):
            switches, body = [_source(code, item.context_expr) for item in node.items], node.body
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            switches, body = [_source(code, d) for d in node.decorator_list], node.body
        off = next((w for w in switches if any(o in w.replace(" ", "") for o in _OFF)), None)
        if off is not None:
            for inner in body:
                for sub in ast.walk(inner):
                    if isinstance(sub, ast.stmt):
                        out.setdefault(id(sub), off)
        # `torch.set_grad_enabled(False)` as a statement: off for what follows in its block,
        # until it is switched on again
        for block in (getattr(node, f, None) for f in ("body", "orelse", "finalbody")):
            if not isinstance(block, list):
                continue
            switch: str | None = None
            for stmt in block:
                said = _source(code, stmt).replace(" ", "") if isinstance(stmt, ast.Expr) else ""
                if "set_grad_enabled(" in said:
                    switch = _source(code, stmt) if "(False)" in said else None
                    continue
                if switch is not None:
                    for sub in ast.walk(stmt):
                        if isinstance(sub, ast.stmt):
                            out.setdefault(id(sub), switch)
    return out


def _taken_out(value: ast.expr) -> str | None:
    for node in ast.walk(value):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr in ("detach", "item", "numpy", "tolist"):
            return f".{node.func.attr}()"
        if isinstance(node, ast.Attribute) and node.attr == "data":
            return ".data"
    return None


def _called(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _made(value: ast.expr) -> bool:
    if not isinstance(value, ast.Call):
        return False
    return _called(value) in _MAKERS and not any(
        k.arg == "requires_grad" and not (isinstance(k.value, ast.Constant)
                                          and k.value.value is False)
        for k in value.keywords)


def _backward_calls(code: str, statement: ast.stmt) -> list[Backward]:
    out = []
    for node in ast.walk(statement):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        if node.func.attr != "backward":
            continue
        receiver = node.func.value
        # torch.autograd.backward(out, grad): the output is the first argument
        if _source(code, receiver) in ("torch.autograd", "autograd"):
            output = node.args[0] if node.args else None
            gradient = len(node.args) > 1
        else:
            output, gradient = receiver, bool(node.args)
        gradient = gradient or any(k.arg in ("gradient", "grad_tensors") for k in node.keywords)
        out.append(
            Backward(
                line=node.lineno,
                call=_source(code, node),
                output=_source(code, output) if output is not None else None,
                with_gradient=gradient,
            )
        )
    return out


def _makes_leaf(node: ast.AST) -> bool:
    """A call that makes a leaf that requires grad."""
    if not isinstance(node, ast.Call):
        return False
    if _called(node) in _LEAF_MAKERS:
        return True
    return any(
        k.arg == "requires_grad" and isinstance(k.value, ast.Constant) and k.value.value
        for k in node.keywords
    )


def _hides_leaf(value: ast.expr) -> bool:
    """Whether a leaf that requires grad is made inside ``value`` but ``value`` is the result
    of an operation on it: the name gets the result, not the leaf."""
    if _makes_leaf(value):
        return False
    return any(_makes_leaf(node) for node in ast.walk(value))


def _bindings(code: str, statement: ast.stmt, under: str | None = None
              ) -> list[tuple[str, Binding]]:
    if not isinstance(statement, (ast.Assign, ast.AnnAssign)) or statement.value is None:
        return []
    targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
    pairs: list[tuple[ast.expr, ast.expr]] = []
    for target in targets:
        value = statement.value
        if isinstance(target, ast.Tuple | ast.List) and isinstance(value, ast.Tuple | ast.List) \
                and len(target.elts) == len(value.elts):
            # ``a, b = a.cuda(), b.cuda()``: each name is bound to its own value
            pairs.extend(zip(target.elts, value.elts, strict=True))
        else:
            pairs.append((target, value))
    out = []
    for target, value in pairs:
        if isinstance(target, ast.Name):
            read = {n.id for n in ast.walk(value) if isinstance(n, ast.Name)}
            out.append(
                (
                    target.id,
                    Binding(
                        line=statement.lineno,
                        statement=_source(code, statement),
                        rebinds=target.id in read,
                        hides_leaf=_hides_leaf(value),
                        under=under,
                        taken_out=_taken_out(value),
                        made=_made(value),
                        creates_leaf=_makes_leaf(value),
                    ),
                )
            )
    return out


def _record(line: int, name: str) -> str:
    """An expression that appends what ``name`` is now to the run's records."""
    return (
        f'globals().setdefault("{SEEN}", []).append([{line}, "{name}", '
        f'getattr({name}, "is_leaf", None), getattr({name}, "requires_grad", None), '
        f'(lambda f: None if f is None else f.name())(getattr({name}, "grad_fn", None)), '
        f'getattr({name}, "grad", 0) is None, len(globals().get("{BACKWARDS}", ()))])'
    )


def watch(code: str) -> Watched | None:
    """``code`` with its records, or None when it reads no ``.grad`` (or does not parse)."""
    try:
        tree = syntax_tree.parse(code)
    except SyntaxError:
        return None
    lines = code.splitlines(keepends=True)
    inserts: list[tuple[int, int, str]] = []
    names: list[str] = []
    backwards: list[Backward] = []
    bindings: dict[str, list[Binding]] = {}
    off = _recording_off(code, tree)
    flags: set[tuple[int, str]] = set()
    grads: set[tuple[int, str]] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt) or isinstance(node, _COMPOUND):
            continue
        for name, binding in _bindings(code, node, off.get(id(node))):
            bindings.setdefault(name, []).append(binding)
        reads = _grad_reads(node)
        flagged = [n for n in _grad_reads(node, FLAGS) if n not in reads]
        grads |= {(node.lineno, n) for n in reads}
        flags |= {(node.lineno, n) for n in flagged}
        reads = reads + flagged
        calls = _backward_calls(code, node)
        backwards += calls
        records = [_record(node.lineno, name) for name in reads]
        if calls:
            records.append(f'globals().setdefault("{BACKWARDS}", []).append({node.lineno})')
        if not records:
            continue
        names += [n for n in reads if n not in names]
        # a simple statement may follow ";" or a block's ":" on its line: so may the records
        inserts.append((node.lineno, node.col_offset, "; ".join(records) + "; "))
    if not names:
        return None
    for lineno, col, text in sorted(inserts, reverse=True):
        raw = lines[lineno - 1].encode("utf-8")
        lines[lineno - 1] = (raw[:col] + text.encode() + raw[col:]).decode("utf-8")
    return Watched(
        code="".join(lines),
        names=tuple(names),
        backwards=tuple(sorted(backwards, key=lambda b: b.line)),
        bindings={k: tuple(sorted(v, key=lambda b: b.line)) for k, v in bindings.items()},
        flags=frozenset(flags),
        grads=frozenset(grads),
    )


def seen_in(value: Any) -> list[Seen]:
    """The records of a run (the probe's plain value), those that have the right shape."""
    out = []
    for row in value if isinstance(value, list) else []:
        if not (isinstance(row, list) and len(row) == 7):
            continue
        line, name, leaf, rg, grad_fn, none, count = row
        if not (isinstance(line, int) and isinstance(name, str) and isinstance(count, int)):
            continue
        out.append(
            Seen(
                line=line,
                name=name,
                is_leaf=leaf if isinstance(leaf, bool) else None,
                requires_grad=rg if isinstance(rg, bool) else None,
                grad_fn=grad_fn if isinstance(grad_fn, str) else None,
                grad_none=none is True,
                backwards=count,
            )
        )
    return out


@dataclass(frozen=True)
class Fact:
    key: str
    """Its entry in facts.yaml."""
    values: dict[str, str]
    ref: str
    """The LESSON/STEP that teaches it."""


@lru_cache(maxsize=1)
def _texts() -> dict[str, Any]:
    from tutor.data_cache import read_data

    data: dict[str, Any] = read_data(DATA)["facts"]
    return data


def _binding_before(watched: Watched, name: str, line: int) -> Binding | None:
    found = [b for b in watched.bindings.get(name, ()) if b.line <= line]
    return found[-1] if found else None


def _backward_before(watched: Watched, line: int) -> Backward | None:
    found = [b for b in watched.backwards if b.line < line]
    return found[-1] if found else None


@dataclass(frozen=True)
class Pass:
    """One ``backward()`` as the instrumented run saw it, in the order they ran."""

    reached: tuple[str, ...]
    """The names of the leaves it reached (empty when the run did not record them)."""
    accumulated: int
    """Leaves it reached whose ``.grad`` already held an earlier call's gradient."""


def _added(name: str, passes: list[Pass]) -> int:
    """How many of ``passes`` (those run before a read of ``name.grad``) added into it, when
    one of them added to an earlier one's gradient; else 0."""
    touching = [p for p in passes if not p.reached or name in p.reached]
    if any(p.accumulated for p in touching):
        return len(touching)
    return 0


def facts(watched: Watched, seen: list[Seen], passes: list[Pass] | None = None) -> list[Fact]:
    """What explains each ``.grad`` the code reads, once per name and fact, in line order.
    ``passes``: the backward() calls of the run in order (an accumulation is said only when
    one of them added into a gradient an earlier one left)."""
    passes = passes or []
    out: list[Fact] = []
    keys: set[tuple[str, str]] = set()

    def add(key: str, name: str, ref: str, **values: str) -> None:
        if (key, name) not in keys:
            keys.add((key, name))
            out.append(Fact(key, {"name": name, **values}, ref))

    for record in sorted(seen, key=lambda s: s.line):
        name, line = record.name, record.line
        if name not in watched.names or record.is_leaf is None:
            continue  # not a tensor: nothing of autograd to explain
        binding = _binding_before(watched, name, line)
        call = _backward_before(watched, line)
        if (line, name) in watched.flags:
            _flag_fact(add, name, record, binding)
            continue
        if not record.requires_grad:
            add("no_requires_grad", name, "requires-grad/first-gradient")
        elif not record.is_leaf and not record.grad_none:
            # retain_grad() kept its gradient: with respect to the intermediate the name
            # holds (after a rebinding, not the leaf it held before)
            output = call.output or call.call if call is not None else "the output"
            add("retained", name, "backward/who-gets-grad", grad_fn=record.grad_fn or "?",
                output=output)
            if binding is not None and binding.rebinds:
                add("rebound_retained", name, "graph/leaf-or-not", line=str(binding.line),
                    statement=binding.statement)
        elif not record.is_leaf:
            add("non_leaf", name, "graph/leaf-or-not", grad_fn=record.grad_fn or "?")
            if binding is not None and binding.rebinds:
                add("rebound", name, "graph/leaf-or-not", line=str(binding.line),
                    statement=binding.statement)
            elif binding is not None and binding.hides_leaf:
                add("hidden_leaf", name, "graph/leaf-or-not", line=str(binding.line),
                    statement=binding.statement)
        elif record.grad_none and record.backwards == 0:
            add("no_backward_yet", name, "backward/intro", line=str(line))
        elif record.grad_none:
            add("not_reached", name, "backward/who-gets-grad", line=str(line))
        elif (count := _added(name, passes[: record.backwards])) >= 2:
            add("added", name, "accumulation/why-accumulate", line=str(line), count=str(count))
        elif call is not None and not call.with_gradient:  # backward(v): the vjp fact says it
            reached = [p for p in passes[: record.backwards] if not p.reached or name in p.reached]
            # "the only backward() that reached it" is said only when it is, and when the
            # code has another backward() it could be confused with
            single = len(watched.backwards) <= 1
            key = "filled_plain" if len(reached) >= 2 or single else "filled"
            add(key, name, "backward/intro", line=str(call.line), call=call.call,
                output=call.output or call.call, read=str(line))
        if record.requires_grad and call is not None and call.with_gradient:
            add("vector_jacobian", "", "jacobian-vjp/intro", call=call.call)
    # a name whose .grad a fact explains needs no second word on its flags
    explained = {f.values["name"] for f in out if f.key not in FLAG_FACTS}
    return [f for f in out if f.key not in FLAG_FACTS or f.values["name"] not in explained]


FLAG_FACTS = frozenset({"tracked_leaf", "tracked_result", "untracked_off",
                        "untracked_taken_out", "untracked_made"})


def _flag_fact(add: Any, name: str, record: Seen, binding: Binding | None) -> None:
    """Why ``name`` requires grad or not (what a printed ``requires_grad``, ``is_leaf`` or
    ``grad_fn`` shows), from the statement that bound it."""
    # only what the record and the binding's own words establish: a leaf "created to require
    # grad" only where the line says requires_grad (a view made under no_grad can be a leaf
    # that requires grad too), untracked inputs never (recording may be off globally)
    at = {"line": str(binding.line), "statement": binding.statement} if binding else None
    if record.requires_grad and record.is_leaf:
        if binding is not None and binding.creates_leaf:
            add("tracked_leaf", name, "requires-grad/intro")
    elif record.requires_grad and record.grad_fn and at is not None:
        add("tracked_result", name, "graph/leaf-or-not", grad_fn=record.grad_fn, **at)
    elif record.requires_grad is False and binding is not None and at is not None:
        if binding.under:
            add("untracked_off", name, "no-grad/intro", block=binding.under, **at)
        elif binding.taken_out:
            add("untracked_taken_out", name, "detach/intro", how=binding.taken_out, **at)
        elif binding.made:
            add("untracked_made", name, "requires-grad/intro", **at)


def worded(found: list[Fact]) -> Text:
    """The facts, one short paragraph each, in both languages."""
    texts = _texts()
    en, zh = [], []
    for fact in found:
        entry = texts[fact.key]
        en.append(entry["en"].strip().format(**fact.values))
        zh.append(entry["zh"].strip().format(**fact.values))
    return Text(en="\n\n".join(en), zh="\n\n".join(zh))


def explains_why(found: list[Fact]) -> bool:
    """Whether the facts say why (a leaf, a rebinding, an accumulation), not only what (a
    gradient filled, a leaf made to require grad)."""
    return any(not f.key.startswith("filled") and f.key != "tracked_leaf" for f in found)


def read_for(found: list[Fact]) -> str | None:
    """The step to read: the one that teaches the first fact that says why."""
    why = [f for f in found if not f.key.startswith("filled")] or found
    return why[0].ref if why else None


def text_for(found: list[Fact], lang: Lang) -> str:
    return worded(found).get(lang)

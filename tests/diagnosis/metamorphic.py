"""Metamorphic variants of a learner program: the same meaning and the same bug, written
another way, each knowing where the original's lines went.

Plain :mod:`ast` analysis, text edits at the positions it gives (comments and layout kept),
deterministic. Six transforms, at most one variant each:

- ``rename``: the learner's own names (variables, parameters, functions, classes, methods,
  attributes set on ``self``) renamed consistently to neutral words; torch's names never;
- ``main``: the module-level code moved into ``def main(): ...`` and ``main()``;
- ``loop-function``: the training loop (or the block from the failing statement to the end)
  moved into a function that takes the model, optimizer and data as parameters (named
  ``<name>_in``, so a name is followed through the call) and returns what later code reads;
- ``module-class``: a model built at module level (``net = nn.Sequential(...)``) built in
  ``__init__`` of an ``nn.Module`` subclass with a ``forward``;
- ``prelude``: imports, a comment, a print and an unused helper function added on top (every
  line shifts) and a comment and a print before the statement that holds the focus line;
- ``tensor-helper``: a tensor made inline (``x = torch.randn(...)``) made by a helper
  function instead.

A variant keeps the meaning only if it reproduces: :func:`reproduces` compares its run with
the original's (the same exception type, or the same printed numbers); a caller drops the
others. Nothing here runs code.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import io
import keyword
import re
import tokenize
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache

from tutor.python_names import dotted

TRANSFORMS = ("rename", "main", "loop-function", "module-class", "prelude", "tensor-helper")

WORDS = ("apple", "berry", "cherry", "damson", "elder", "fig", "grape", "hazel", "iris",
         "juniper", "kiwi", "lemon", "mango", "nutmeg", "olive", "peach", "quince", "rowan",
         "sage", "thyme", "umbel", "vanilla", "walnut", "yarrow", "zest")
"""The new names, in order (a class's capitalised): words no torch API uses."""
FACTORIES = frozenset({
    "tensor", "randn", "rand", "randint", "zeros", "ones", "full", "arange", "linspace",
    "empty", "eye", "randn_like", "rand_like", "zeros_like", "ones_like", "full_like",
    "from_numpy", "as_tensor", "randperm", "normal", "Tensor", "FloatTensor", "LongTensor",
    "DoubleTensor", "stack", "cat", "logspace"})
"""``torch.X(...)`` calls that make a tensor (the values ``tensor-helper`` moves)."""
MODULE_CHAIN = frozenset({"to", "cuda", "cpu", "double", "float", "half", "train", "eval",
                          "requires_grad_", "bfloat16"})
"""Methods of a module that return the module itself (``nn.Linear(2, 1).double()``)."""
WRAPPER_KEEPS = frozenset({
    "parameters", "named_parameters", "zero_grad", "train", "eval", "to", "cuda", "cpu",
    "double", "float", "half", "state_dict", "load_state_dict", "apply", "requires_grad_",
    "register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook",
    "training", "buffers", "named_buffers"})
"""What a wrapping module answers as the wrapped one does; any other use of the model's name
(``net[0]``, ``net.weight``, ``net.children()``) goes to the wrapped module."""
ADDED_PRINTS = ("--- start ---", "--- step ---")

Origins = frozenset[int]
Line = tuple[str, Origins]
"""A line of a variant and the original lines it holds (empty for a line a transform added)."""


@dataclass(frozen=True)
class Variant:
    transform: str
    code: str
    lines: dict[int, Origins]
    """Original line -> the variant's lines that hold it."""
    added_output: tuple[str, ...] = ()
    """Lines the variant prints that the original did not."""

    def mapped(self, lines: Iterable[int]) -> set[int]:
        out: set[int] = set()
        for line in lines:
            out |= self.lines.get(line, frozenset())
        return out


# -- reproduction ---------------------------------------------------------------------------
NUMBER = re.compile(r"-?\d+\.\d+(?:e[-+]?\d+)?|\bnan\b|\binf\b", re.IGNORECASE)


def printed_numbers(stdout: str, added: Sequence[str] = ()) -> list[str]:
    """The decimal numbers a run printed (the silent symptom: losses, gradients), leaving out
    the lines a variant added."""
    kept = [line for line in stdout.splitlines() if line.strip() not in added]
    return NUMBER.findall("\n".join(kept))


def reproduces(original: object, variant_run: object, variant: Variant) -> bool:
    """Whether the variant's run shows the original's problem: the same exception type, or,
    for a run that ended well, the same printed numbers. Both are ``RunResult``-like."""
    outcome, error = getattr(original, "outcome", None), getattr(original, "error", None)
    if getattr(variant_run, "outcome", None) != outcome:
        return False
    if outcome == "error":
        other = getattr(variant_run, "error", None)
        return error is not None and other is not None and other.type == error.type
    if outcome != "ok":
        return False
    return printed_numbers(getattr(original, "stdout", "")) == printed_numbers(
        getattr(variant_run, "stdout", ""), variant.added_output)


# -- the program, read ----------------------------------------------------------------------
class Program:
    """The original program: its lines (text and UTF-8 bytes, the AST's offsets count bytes),
    its tree, and what the transforms ask of them."""

    def __init__(self, code: str) -> None:
        self.code = code
        self.tree = ast.parse(code)
        self.text = code.splitlines()
        self.raw = [line.encode("utf-8") for line in self.text]
        self.interior = _string_interior(code)
        self.parents = {child: node for node in ast.walk(self.tree)
                        for child in ast.iter_child_nodes(node)}
        self.imported = {(a.asname or a.name).split(".")[0] for n in ast.walk(self.tree)
                         if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names}
        self.every_name = {n for node in ast.walk(self.tree) for n in _names_of(node)}

    def segment(self, start: tuple[int, int], end: tuple[int, int]) -> list[str]:
        """The text from (line, byte column) to (line, byte column), by line."""
        (l1, c1), (l2, c2) = start, end
        if l1 == l2:
            return [self.raw[l1 - 1][c1:c2].decode("utf-8")]
        out = [self.raw[l1 - 1][c1:].decode("utf-8")]
        out += [self.raw[n - 1].decode("utf-8") for n in range(l1 + 1, l2)]
        out.append(self.raw[l2 - 1][:c2].decode("utf-8"))
        return out

    def node_text(self, node: ast.AST) -> list[str]:
        return self.segment((node.lineno, node.col_offset),  # type: ignore[attr-defined]
                            (node.end_lineno, node.end_col_offset))  # type: ignore[attr-defined]

    def lines(self) -> list[Line]:
        return [(text, frozenset({n})) for n, text in enumerate(self.text, start=1)]

    def fresh(self, wanted: str, taken: set[str] | None = None) -> str:
        taken = taken if taken is not None else set()
        name, k = wanted, 2
        while name in self.every_name or name in taken or name in BUILTINS:
            name, k = f"{wanted}{k}", k + 1
        return name

    def top_index(self, line: int) -> int | None:
        """The index of the module-level statement that holds the line."""
        for index, stmt in enumerate(self.tree.body):
            if first_line(stmt) <= line <= (stmt.end_lineno or stmt.lineno):
                return index
        return None

    def module_functions(self) -> list[ast.AST]:
        return [s for s in self.tree.body
                if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]


BUILTINS = frozenset(dir(builtins)) | frozenset(keyword.kwlist) | {"self", "cls"}


def first_line(stmt: ast.stmt) -> int:
    decorators = getattr(stmt, "decorator_list", [])
    return min([stmt.lineno, *(d.lineno for d in decorators)])


def _names_of(node: ast.AST) -> Iterator[str]:
    if isinstance(node, ast.Name):
        yield node.id
    elif isinstance(node, ast.Attribute):
        yield node.attr
    elif isinstance(node, ast.arg):
        yield node.arg
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        yield node.name
    elif isinstance(node, ast.keyword) and node.arg:
        yield node.arg
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
        for alias in node.names:
            yield (alias.asname or alias.name).split(".")[0]


def _string_interior(code: str) -> set[int]:
    """Lines inside a string that spans lines (after its first): indenting them would change
    the string."""
    inside: set[int] = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(code).readline):
            if token.type == tokenize.STRING and token.end[0] > token.start[0]:
                inside.update(range(token.start[0] + 1, token.end[0] + 1))
    except (tokenize.TokenError, SyntaxError):
        pass
    return inside


def _finish(transform: str, lines: list[Line], added: tuple[str, ...] = ()) -> Variant | None:
    code = "\n".join(text for text, _ in lines) + "\n"
    try:
        ast.parse(code)
    except SyntaxError:
        return None
    mapping: dict[int, set[int]] = {}
    for number, (_, origins) in enumerate(lines, start=1):
        for origin in origins:
            mapping.setdefault(origin, set()).add(number)
    return Variant(transform, code, {k: frozenset(v) for k, v in mapping.items()}, added)


def _indented(program: Program, lines: list[Line], by: str = "    ") -> list[Line]:
    out = []
    for text, origins in lines:
        inner = bool(origins) and min(origins) in program.interior
        out.append((text if inner or not text.strip() else by + text, origins))
    return out


def _unmovable(program: Program) -> bool:
    """``global``, ``nonlocal`` or ``import *`` (their meaning changes when code moves into
    a function), or tabs in the indentation (an added indent would mix them)."""
    tree = program.tree
    return any(isinstance(n, (ast.Global, ast.Nonlocal)) for n in ast.walk(tree)) or any(
        isinstance(n, ast.ImportFrom) and any(a.name == "*" for a in n.names)
        for n in ast.walk(tree)) or any(
        "\t" in line[:len(line) - len(line.lstrip())] for line in program.text)


# -- renaming -------------------------------------------------------------------------------
@cache
def torch_names() -> frozenset[str]:
    """Names torch's API owns: attributes of torch, tensors, modules, optimizers, and the
    arguments and attributes of every ``nn`` layer. Never renamed."""
    import torch
    from torch import nn

    names: set[str] = set()
    for owner in (torch, torch.Tensor, nn, nn.functional, nn.Module, torch.optim,
                  torch.optim.Optimizer, torch.autograd, torch.autograd.Function,
                  torch.utils.data, torch.utils.data.Dataset, torch.utils.data.DataLoader):
        names.update(dir(owner))
    for value in vars(nn).values():
        if inspect.isclass(value) and issubclass(value, nn.Module):
            names.update(dir(value))
            names.update(getattr(value, "__constants__", []))
            names.update(getattr(value, "__annotations__", {}))
            try:
                names.update(inspect.signature(value.__init__).parameters)
            except (TypeError, ValueError):
                continue
    return frozenset(names)


@dataclass
class _Names:
    """The learner's own names, in two namespaces: variables (and parameters, functions,
    classes) and attributes (set on ``self``, and methods); where each first appears."""

    variables: dict[str, tuple[int, int]]
    attributes: dict[str, tuple[int, int]]
    classes: set[str]
    callables: set[str]
    """Functions, classes and methods: their keyword arguments are the learner's too."""


def _learner_names(program: Program) -> _Names:
    api = torch_names()
    names = _Names({}, {}, set(), set())
    excepted = {n.name for n in ast.walk(program.tree)
                if isinstance(n, ast.ExceptHandler) and n.name}

    def note(space: dict[str, tuple[int, int]], name: str, node: ast.AST) -> None:
        if name in BUILTINS or name in program.imported or name in excepted or (
                name.startswith("__") or name == "_"):
            return
        at = (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
        space[name] = min(space.get(name, at), at)

    for node in ast.walk(program.tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            note(names.variables, node.id, node)
        elif isinstance(node, ast.arg):
            note(names.variables, node.arg, node)
        elif isinstance(node, ast.ClassDef):
            note(names.variables, node.name, node)
            names.classes.add(node.name)
            names.callables.add(node.name)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if not isinstance(program.parents.get(node), ast.ClassDef):
                note(names.variables, node.name, node)
                names.callables.add(node.name)
            elif node.name not in api:
                note(names.attributes, node.name, node)
                names.callables.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and (
                isinstance(node.value, ast.Name) and node.value.id == "self"
                and node.attr not in api):
            note(names.attributes, node.attr, node)
    return names


def _name_spans(program: Program, variables: dict[str, str], attributes: dict[str, str],
                callables: set[str]) -> Iterator[tuple[int, int, str, str]]:
    """(line, byte column, old, new) of every place a renamed name is written."""
    for node in ast.walk(program.tree):
        if isinstance(node, ast.Name) and node.id in variables:
            yield node.lineno, node.col_offset, node.id, variables[node.id]
        elif isinstance(node, ast.arg) and node.arg in variables:
            yield node.lineno, node.col_offset, node.arg, variables[node.arg]
        elif isinstance(node, ast.Attribute) and node.attr in attributes:
            end = node.end_col_offset or 0
            yield (node.end_lineno or node.lineno, end - len(node.attr.encode()), node.attr,
                   attributes[node.attr])
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            method = isinstance(program.parents.get(node), ast.ClassDef) and not isinstance(
                node, ast.ClassDef)
            space = attributes if method else variables
            if node.name not in space:
                continue
            raw = program.raw[node.lineno - 1].decode("utf-8")
            found = re.compile(rf"(?:def|class)\s+({re.escape(node.name)})\b").search(raw)
            if found is not None:
                column = len(raw[:found.start(1)].encode())
                yield node.lineno, column, node.name, space[node.name]
        elif isinstance(node, ast.Call):
            callee = node.func.id if isinstance(node.func, ast.Name) else (
                node.func.attr if isinstance(node.func, ast.Attribute) else "")
            if callee in callables:
                for kw in node.keywords:
                    if kw.arg in variables:
                        yield kw.lineno, kw.col_offset, kw.arg, variables[kw.arg]


def _replace(program: Program, spans: Iterable[tuple[int, int, str, str]]) -> list[Line] | None:
    """The program with each span's old text replaced by the new; None when a span does not
    hold the text it should (a position the AST got wrong)."""
    by_line: dict[int, list[tuple[int, str, str]]] = {}
    for line, column, old, new in spans:
        by_line.setdefault(line, []).append((column, old, new))
    out = program.lines()
    for line, edits in by_line.items():
        raw = program.raw[line - 1]
        for column, old, new in sorted(set(edits), reverse=True):
            if raw[column:column + len(old.encode())] != old.encode():
                return None
            raw = raw[:column] + new.encode() + raw[column + len(old.encode()):]
        out[line - 1] = (raw.decode("utf-8"), out[line - 1][1])
    return out


def rename(program: Program) -> Variant | None:
    if _unmovable(program):
        return None
    names = _learner_names(program)
    ordered = sorted([*((at, 0, n) for n, at in names.variables.items()),
                      *((at, 1, n) for n, at in names.attributes.items())])
    if not ordered:
        return None
    taken: set[str] = set(torch_names())
    maps: tuple[dict[str, str], dict[str, str]] = ({}, {})
    words = iter(WORDS)
    for count, (_, space, name) in enumerate(ordered):
        word = next(words, None) or f"name{count}"
        new = program.fresh(word.capitalize() if (
            space == 0 and name in names.classes) else word, taken)
        taken.add(new)
        maps[space][name] = new
    lines = _replace(program, _name_spans(program, *maps, names.callables))
    return None if lines is None else _finish("rename", lines)


# -- main() ---------------------------------------------------------------------------------
def _leading_imports(tree: ast.Module) -> int:
    index = 0
    for index, stmt in enumerate(tree.body):
        docstring = index == 0 and isinstance(stmt, ast.Expr) and isinstance(
            stmt.value, ast.Constant) and isinstance(stmt.value.value, str)
        if not (isinstance(stmt, (ast.Import, ast.ImportFrom)) or docstring):
            return index
    return len(tree.body)


def wrap_in_main(program: Program) -> Variant | None:
    tree = program.tree
    if _unmovable(program):
        return None
    start_index = _leading_imports(tree)
    if start_index == len(tree.body):
        return None
    start = first_line(tree.body[start_index])
    name = program.fresh("main")
    lines = program.lines()
    out = [*lines[:start - 1], (f"def {name}():", frozenset()),
           *_indented(program, lines[start - 1:]), ("", frozenset()), ("", frozenset()),
           (f"{name}()", frozenset())]
    return _finish("main", out)


# -- a block moved into a function ----------------------------------------------------------
def _loads(node: ast.AST) -> list[ast.Name]:
    return [n for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]


def _stores(nodes: Iterable[ast.AST]) -> set[str]:
    """Names the statements bind in their own scope (not inside a def they hold)."""
    out: set[str] = set()
    for stmt in nodes:
        for node in _walk_scope(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                out.add(node.id)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                out.add(node.name)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                out.update(_names_of(node))
    return out


def _walk_scope(node: ast.AST) -> Iterator[ast.AST]:
    """The nodes of ``node`` that belong to its scope: not the insides of a def, class,
    lambda or comprehension it holds (their names are theirs)."""
    yield node
    nested = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.ListComp,
              ast.SetComp, ast.DictComp, ast.GeneratorExp)
    for child in ast.iter_child_nodes(node):
        if isinstance(child, nested):
            yield child  # its name (a def binds it here), not its body
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                for part in [*child.decorator_list, *getattr(child, "bases", [])]:
                    yield from _walk_scope(part)
            continue
        yield from _walk_scope(child)


def _nested_binders(nodes: Iterable[ast.AST]) -> set[str]:
    """Names bound inside the defs, lambdas and comprehensions these statements hold."""
    out: set[str] = set()
    for stmt in nodes:
        for node in ast.walk(stmt):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                                 ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp,
                                 ast.ClassDef)) and node is not stmt:
                for sub in ast.walk(node):
                    if isinstance(sub, ast.arg):
                        out.add(sub.arg)
                    elif isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                        out.add(sub.id)
    return out


def _free_in_functions(functions: Iterable[ast.AST]) -> set[str]:
    out: set[str] = set()
    for fn in functions:
        out.update(n.id for n in _loads(fn))
    return out


def _training_loop(body: list[ast.stmt]) -> int | None:
    for index, stmt in enumerate(body):
        if isinstance(stmt, (ast.For, ast.While)) and any(
                isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                and n.func.attr in ("backward", "step") for n in ast.walk(stmt)):
            return index
    return None


def into_function(program: Program, focus: Sequence[int]) -> Variant | None:
    tree = program.tree
    if _unmovable(program):
        return None
    body = tree.body
    first = _leading_imports(tree)
    loop = _training_loop(body)
    if loop is not None:
        lo, hi, fname = loop, loop + 1, "fit"
    else:
        tops = [program.top_index(line) for line in focus]
        picked = [i for i in tops if i is not None and i >= first and not isinstance(
            body[i], (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import,
                      ast.ImportFrom))]
        if not picked:
            return None
        lo, hi, fname = picked[0], len(body), "run_steps"
    block = body[lo:hi]
    before, after = body[:lo], body[hi:]
    bound_before = _stores([s for s in before if not isinstance(
        s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom))])
    reads = [n.id for stmt in block for n in _loads(stmt)] + [
        n.target.id for stmt in block for n in ast.walk(stmt)
        if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name)]
    params = list(dict.fromkeys(n for n in reads if n in bound_before))
    assigned = _stores(block)
    if assigned & _free_in_functions(program.module_functions()):
        return None  # a function elsewhere reads a global the block would make local
    if set(params) & _nested_binders(block):
        return None
    later = {n.id for stmt in after for n in _loads(stmt)}
    outputs = sorted(assigned & later)
    fname = program.fresh(fname)
    taken: set[str] = {fname}
    renamed = {p: program.fresh(f"{p}_in", taken) for p in params}
    taken.update(renamed.values())
    spans = [(n.lineno, n.col_offset, n.id, renamed[n.id]) for stmt in block
             for n in ast.walk(stmt) if isinstance(n, ast.Name) and n.id in renamed]
    lines = _replace(program, spans)
    if lines is None:
        return None
    start, end = first_line(block[0]), block[-1].end_lineno or block[-1].lineno
    inner = [renamed.get(o, o) for o in outputs]
    header = (f"def {fname}({', '.join(renamed[p] for p in params)}):", frozenset[int]())
    call = f"{fname}({', '.join(params)})"
    tail: list[Line] = []
    if outputs:
        tail.append(("    return " + ", ".join(inner), frozenset()))
        call = f"{', '.join(outputs)} = {call}"
    out = [*lines[:start - 1], header, *_indented(program, lines[start - 1:end]), *tail,
           ("", frozenset()), ("", frozenset()), (call, frozenset()), *lines[end:]]
    return _finish("loop-function", out)


# -- a model built in a module's __init__ ---------------------------------------------------
def _nn_names(program: Program) -> set[str]:
    """Names bound to ``torch.nn`` things by ``from torch.nn import Linear``."""
    out: set[str] = set()
    for node in ast.walk(program.tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("torch.nn"):
            out.update(a.asname or a.name for a in node.names)
    return out


def _peel(value: ast.expr, methods: frozenset[str] | None) -> tuple[ast.expr, ast.Call]:
    """The core call of ``value`` under a chain of method calls (``net(...).to(device)``):
    (value, core); a chain method must be one of ``methods`` (any, for None)."""
    node = value
    while (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
           and isinstance(node.func.value, ast.Call)
           and (methods is None or node.func.attr in methods)):
        node = node.func.value
    if not isinstance(node, ast.Call):
        raise ValueError("not a call")
    return value, node


def _model_assignment(program: Program) -> tuple[ast.Assign, ast.Call, str] | None:
    nn_names = _nn_names(program)
    stores: dict[str, int] = {}
    for node in ast.walk(program.tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            stores[node.id] = stores.get(node.id, 0) + 1
    called = {n.func.id for n in ast.walk(program.tree)
              if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    for stmt in program.tree.body:
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)):
            continue
        name = stmt.targets[0].id
        try:
            _, core = _peel(stmt.value, MODULE_CHAIN)
        except ValueError:
            continue
        func = dotted(core.func) or ""
        is_nn = func.startswith(("nn.", "torch.nn.")) or func in nn_names
        if is_nn and stores.get(name) == 1 and name in called and (
                stmt.lineno == core.lineno):
            return stmt, core, name
    return None


def into_module_class(program: Program) -> Variant | None:
    if _unmovable(program):
        return None
    found = _model_assignment(program)
    if found is None:
        return None
    stmt, core, name = found
    if "nn" in program.imported:
        base = "nn.Module"
    elif "torch" in program.imported:
        base = "torch.nn.Module"
    else:
        return None
    end_line, end_col = stmt.end_lineno or stmt.lineno, stmt.end_col_offset or 0
    core_end = (core.end_lineno or core.lineno, core.end_col_offset or 0)
    chain = program.segment(core_end, (end_line, end_col))
    if len(chain) > 1:
        return None
    cls, attr = program.fresh("Model"), program.fresh("layers")
    # every use of the model's name but a call and the module's own API goes to the layers
    spans = []
    for node in ast.walk(program.tree):
        if not (isinstance(node, ast.Name) and node.id == name and isinstance(
                node.ctx, ast.Load)):
            continue
        parent = program.parents.get(node)
        if isinstance(parent, ast.Call) and parent.func is node:
            continue
        if isinstance(parent, ast.Attribute) and parent.attr in WRAPPER_KEEPS:
            continue
        spans.append((node.lineno, node.col_offset, name, f"{name}.{attr}"))
    lines = _replace(program, spans)
    if lines is None:
        return None
    core_text = program.node_text(core)
    rest = program.raw[end_line - 1][end_col:].decode("utf-8")  # a comment after it
    start = stmt.lineno
    origins = [frozenset({start + k}) for k in range(len(core_text))]
    made = [(f"class {cls}({base}):", frozenset[int]()),
            ("    def __init__(self):", frozenset()),
            ("        super().__init__()", frozenset())]
    made.append((f"        self.{attr} = {core_text[0]}", origins[0]))
    made += [(text, o) for text, o in zip(core_text[1:], origins[1:], strict=True)]
    made += [("", frozenset()),
             ("    def forward(self, *args, **kwargs):", frozenset()),
             (f"        return self.{attr}(*args, **kwargs)", frozenset()),
             ("", frozenset()), ("", frozenset()),
             (f"{name} = {cls}(){chain[0]}{rest}", frozenset({start}))]
    out = [*lines[:start - 1], *made, *lines[end_line:]]
    return _finish("module-class", out)


# -- lines added ----------------------------------------------------------------------------
PRELUDE = [
    "import math",
    "import os  # noqa: F401",
    "# A warm-up before the exercise: nothing here is used below.",
    f"print({ADDED_PRINTS[0]!r})",
    "",
    "",
    "def describe_shape(value):",
    '    """The shape of a tensor, as text (not called)."""',
    '    return "x".join(str(n) for n in value.shape) or str(math.pi)',
    "",
    "",
]


def with_prelude(program: Program, focus: Sequence[int]) -> Variant | None:
    tree = program.tree
    lines = program.lines()
    head = 0
    for stmt in tree.body:
        if isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__":
            head = stmt.end_lineno or stmt.lineno
    added: list[Line] = [(text, frozenset()) for text in PRELUDE]
    insert_at: int | None = None
    tops = [program.top_index(line) for line in focus]
    index = next((i for i in tops if i is not None), None)
    if index is not None and index > 0 and first_line(tree.body[index]) > head + 1:
        insert_at = first_line(tree.body[index])
    out = [*lines[:head], *added]
    if insert_at is None:
        out += lines[head:]
        return _finish("prelude", out, ADDED_PRINTS[:1])
    note = [("# the part that matters", frozenset[int]()),
            (f"print({ADDED_PRINTS[1]!r})", frozenset())]
    out += [*lines[head:insert_at - 1], *note, *lines[insert_at - 1:]]
    return _finish("prelude", out, ADDED_PRINTS)


# -- a tensor made by a helper --------------------------------------------------------------
def _factory_assignments(program: Program) -> list[tuple[ast.Assign, str]]:
    out = []
    for node in ast.walk(program.tree):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
            continue
        target = node.targets[0]
        label = target.id if isinstance(target, ast.Name) else (
            target.attr if isinstance(target, ast.Attribute) else None)
        if label is None or node.value.lineno != node.lineno:
            continue
        try:
            _, core = _peel(node.value, None)
        except ValueError:
            continue
        func = core.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and (
                func.value.id == "torch" and func.attr in FACTORIES):
            out.append((node, label))
    return sorted(out, key=lambda pair: pair[0].lineno)


def tensor_by_helper(program: Program, focus: Sequence[int]) -> Variant | None:
    found = _factory_assignments(program)
    if not found:
        return None
    target_line = focus[0] if focus else None
    chosen = found[0]
    if target_line is not None:
        above = [pair for pair in found if pair[0].lineno <= target_line]
        chosen = above[-1] if above else found[0]
    stmt, label = chosen
    top = program.top_index(stmt.lineno)
    if top is None:
        return None
    module_level = {n for s in program.module_functions() for n in _names_of(s)}
    inner_bound = _nested_binders([stmt.value]) | {
        n.id for n in ast.walk(stmt.value) if isinstance(n, ast.Name) and isinstance(
            n.ctx, ast.Store)}
    params = list(dict.fromkeys(
        n.id for n in _loads(stmt.value) if n.id not in BUILTINS and n.id not in (
            program.imported | module_level | inner_bound)))
    helper = program.fresh(f"make_{label.strip('_')}")
    value_text = program.node_text(stmt.value)
    v_start, v_end = stmt.value.lineno, stmt.value.end_lineno or stmt.value.lineno
    origins = [frozenset({v_start + k}) for k in range(len(value_text))]
    made: list[Line] = [(f"def {helper}({', '.join(params)}):", frozenset()),
                        (f"    return {value_text[0]}", origins[0])]
    made += list(zip(value_text[1:], origins[1:], strict=True))
    made += [("", frozenset()), ("", frozenset())]
    head = program.raw[v_start - 1][:stmt.value.col_offset].decode("utf-8")
    rest = program.raw[v_end - 1][stmt.value.end_col_offset or 0:].decode("utf-8")
    call_line = (f"{head}{helper}({', '.join(params)}){rest}",
                 frozenset(range(v_start, v_end + 1)))
    lines = program.lines()
    at = first_line(program.tree.body[top])
    out = [*lines[:at - 1], *made, *lines[at - 1:v_start - 1], call_line, *lines[v_end:]]
    return _finish("tensor-helper", out)


# -- all of them ----------------------------------------------------------------------------
def variants(code: str, roots: Sequence[int] = (), failing: Sequence[int] = ()
             ) -> list[Variant]:
    """The variants of ``code`` (at most one a transform). ``roots``: the root-cause lines;
    ``failing``: the failing run's traceback lines, outermost first. A transform that moves a
    block or adds lines near a statement picks the statement that holds them."""
    try:
        program = Program(code)
    except (SyntaxError, ValueError):
        return []
    made = [rename(program), wrap_in_main(program),
            into_function(program, [*failing, *roots]), into_module_class(program),
            with_prelude(program, [*roots, *failing]),
            tensor_by_helper(program, [*roots, *failing[::-1]])]
    return [v for v in made if v is not None and v.code != code]

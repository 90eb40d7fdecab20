"""Evidence from the source: data flow and statement order of the learner's program (AST).

Where each name is assigned, which loop holds a statement, the order of ``backward()``,
``zero_grad()`` and ``step()`` in a loop body, ``requires_grad`` set after the value was used,
a model rebuilt after its optimizer, an uncalled ``loss.backward``, a softmax fed to a loss
that applies its own, a prediction without ``eval()``. Never runs the code.
"""

from __future__ import annotations

import ast
from collections.abc import KeysView
from dataclasses import dataclass, field
from functools import cached_property

from tutor.diagnosis.calls import Calls, Function
from tutor.diagnosis.source import Source, source_text
from tutor.diagnosis.source import call_name as called

LOOPS = (ast.For, ast.While, ast.AsyncFor)
SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.Module)


def text(node: ast.AST) -> str:
    return source_text(node)


def target_names(target: ast.AST) -> list[str]:
    """``x`` for ``x``, ``self.fc`` for ``self.fc``, both names of ``a, b``."""
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for elt in target.elts for n in target_names(elt)]
    if isinstance(target, ast.Starred):
        return target_names(target.value)
    if isinstance(target, (ast.Name, ast.Attribute)):
        return [text(target)]
    return []


def call_name(node: ast.AST) -> str:
    """What a call calls (``backward`` for ``loss.backward()``), "" for any other node."""
    return called(node) if isinstance(node, ast.Call) else ""


def module_label(name: str) -> str:
    """A module the re-run names by its path (``model.fc``, ``model.classifier.1``) as the
    learner's code reaches it: ``fc``, ``classifier[1]`` (never a bare ``1``)."""
    parts = name.split(".")
    if len(parts) > 1 and parts[-1].isdigit():
        return f"{parts[-2]}[{parts[-1]}]"
    return parts[-1]


def receiver(node: ast.Call) -> str | None:
    return text(node.func.value) if isinstance(node.func, ast.Attribute) else None


@dataclass
class Flow:
    tree: ast.Module
    lines: list[str]
    parents: dict[ast.AST, ast.AST] = field(default_factory=dict)

    @classmethod
    def of(cls, code: str) -> Flow | None:
        source = Source.of(code)
        if source is None:
            return None
        return cls(source.tree, code.splitlines(), source.parents)

    # -- structure -------------------------------------------------------------------
    def line(self, number: int) -> str:
        return self.lines[number - 1] if 1 <= number <= len(self.lines) else ""

    @cached_property
    def statements(self) -> list[ast.stmt]:
        return sorted((n for n in ast.walk(self.tree) if isinstance(n, ast.stmt)),
                      key=lambda n: (n.lineno, n.col_offset))

    def statement_at(self, number: int) -> ast.stmt | None:
        """The innermost statement that starts on the line."""
        found = None
        for stmt in self.statements:
            if stmt.lineno == number:
                found = stmt
        return found

    def ancestors(self, node: ast.AST) -> list[ast.AST]:
        out = []
        while node in self.parents:
            node = self.parents[node]
            out.append(node)
        return out

    def loops_of(self, node: ast.AST) -> list[ast.stmt]:
        return [a for a in self.ancestors(node) if isinstance(a, ast.stmt) and isinstance(
            a, LOOPS)]

    def scope_of(self, node: ast.AST) -> ast.AST:
        return next((a for a in self.ancestors(node) if isinstance(a, SCOPES)), self.tree)

    def in_no_grad(self, node: ast.AST) -> ast.With | None:
        for a in self.ancestors(node):
            if isinstance(a, ast.With) and any(
                    call_name(item.context_expr) in ("no_grad", "inference_mode")
                    for item in a.items):
                return a
        return None

    def no_grad_reaching(self, node: ast.AST, depth: int = 3) -> ast.With | None:
        """The ``no_grad`` block the node runs in: around it, or around a call of the
        function that holds it (a forward pass called under ``no_grad``), a few calls out."""
        block = self.in_no_grad(node)
        function = self.call_graph.function_of(node)
        if block is not None or function is None or depth <= 0:
            return block
        return next((b for c in self.calls_of(function)
                     if (b := self.no_grad_reaching(c, depth - 1)) is not None), None)

    @cached_property
    def calls(self) -> list[ast.Call]:
        return sorted((n for n in ast.walk(self.tree) if isinstance(n, ast.Call)),
                      key=lambda n: (n.lineno, n.col_offset))

    @cached_property
    def imported(self) -> frozenset[str]:
        """The names the program's imports bind (``torch``, ``nn``, ``F``, ``np``)."""
        return frozenset(a.asname or a.name.split(".")[0] for n in ast.walk(self.tree)
                         if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names)

    def calls_named(self, *names: str) -> list[ast.Call]:
        return [c for c in self.calls if call_name(c) in names]

    @cached_property
    def assignments(self) -> dict[str, list[ast.stmt]]:
        out: dict[str, list[ast.stmt]] = {}
        for stmt in self.statements:
            targets: list[ast.AST] = []
            if isinstance(stmt, ast.Assign):
                targets = list(stmt.targets)
            elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor)):
                targets = [stmt.target]
            for target in targets:
                for name in target_names(target):
                    out.setdefault(name, []).append(stmt)
        return out

    def assigned_before(self, name: str, number: int, node: ast.AST | None = None
                        ) -> ast.stmt | None:
        """The last assignment of ``name`` above the line, in the same scope when given.
        Where the function that holds the line never assigns ``name`` before it, the value
        came from outside: a parameter's from the argument each call gives it (the
        assignment of that argument in the caller, or the caller's statement when the
        argument is an expression), a global's from the module's assignment."""
        return self._assigned_before(name, number, node, 4)

    def _assigned_before(self, name: str, number: int, node: ast.AST | None, depth: int
                         ) -> ast.stmt | None:
        scope = self.scope_of(node) if node is not None else None
        found = None
        for stmt in self.assignments.get(name, []):
            if stmt.lineno < number and (scope is None or self.scope_of(stmt) is scope):
                found = stmt
        if found is not None or depth <= 0 or "." in name:
            return found
        function = self.function_at(number)
        if function is None or any(self.function_at(s.lineno) is function
                                   for s in self.assignments.get(name, [])
                                   if s.lineno < number):
            return found
        for call, arg in self.arguments_for(function, name):
            if isinstance(arg, ast.Name):
                made = self._assigned_before(arg.id, call.lineno, call, depth - 1) or \
                    self._assigned_before(arg.id, call.lineno, None, depth - 1)
                if made is not None:
                    return made
            else:
                holder = self.statement_of(call)
                if holder is not None:
                    return holder
        if self.call_graph.parameter(function, name) is not None:
            return None
        # a free name: the enclosing function's (or the module's) assignment, the last one
        # before the function is first called
        outer = self.enclosing_function(function)
        around = [s for s in self.assignments.get(name, []) if self.function_at(
            s.lineno) is outer]
        calls = [c.lineno for c in self.calls_of(function)]
        before = [s for s in around if calls and s.lineno < min(calls)]
        chosen = before or around
        return chosen[-1] if chosen else None

    # -- across calls ------------------------------------------------------------------
    def function_at(self, number: int) -> Function | None:
        """The innermost function whose body holds the line."""
        stmt = self.statement_at(number)
        if stmt is None:
            found = None
            for fn in self.call_graph.functions:
                if fn.body and fn.body[0].lineno <= number <= (fn.end_lineno or fn.lineno) and (
                        found is None or fn.lineno >= found.lineno):
                    found = fn
            return found
        return next((a for a in [stmt, *self.ancestors(stmt)]
                     if isinstance(a, (ast.FunctionDef, ast.AsyncFunctionDef))
                     and a is not stmt), None)

    def enclosing_function(self, function: ast.AST
                           ) -> Function | None:
        return next((a for a in self.ancestors(function)
                     if isinstance(a, (ast.FunctionDef, ast.AsyncFunctionDef))), None)

    def statement_of(self, node: ast.AST) -> ast.stmt | None:
        return node if isinstance(node, ast.stmt) else next(
            (a for a in self.ancestors(node) if isinstance(a, ast.stmt)), None)

    @cached_property
    def call_graph(self) -> Calls:
        return Calls(self.tree, self.parents)

    def calls_of(self, function: Function) -> list[ast.Call]:
        return self.call_graph.calls_of(function)

    def arguments_for(self, function: Function, name: str) -> list[tuple[ast.Call, ast.expr]]:
        return self.call_graph.arguments_for(function, name)

    def as_called(self, stmt: ast.stmt, path: str, depth: int = 3) -> list[str]:
        """A dotted source path used in ``stmt`` (``model.features``) in the names the
        program's callers give it: where its root is a parameter of the function around
        ``stmt`` that the function does not rebind first, the path from each call's argument
        (``vgg.features`` for ``freeze(vgg)``); else the path itself. The run names tensors
        by the caller's names, so this is what a source path inside a helper means there."""
        root, dot, rest = path.partition(".")
        function = self.function_at(stmt.lineno)
        if depth <= 0 or function is None or not root.isidentifier() or \
                self.call_graph.parameter(function, root) is None or any(
                    self.function_at(s.lineno) is function and s.lineno < stmt.lineno
                    for s in self.assignments.get(root, [])):
            return [path]
        found: list[str] = []
        for call, given in self.arguments_for(function, root):
            if not isinstance(given, (ast.Name, ast.Attribute)):
                continue
            at = self.statement_of(call)
            outer = text(given) + dot + rest
            found += self.as_called(at, outer, depth - 1) if at is not None else [outer]
        return list(dict.fromkeys(found)) or [path]

    def returned(self, call: ast.AST) -> list[ast.Return]:
        return self.call_graph.returned(call)

    def number_of(self, node: ast.expr | None, line: int, depth: int = 5
                  ) -> ast.Constant | None:
        """The number literal a value comes from: the value itself, or, for a name, its
        assignment, the argument a call gave the parameter, or the parameter's default."""
        if node is None or depth <= 0:
            return None
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and (
                not isinstance(node.value, bool)):
            return node
        if not isinstance(node, (ast.Name, ast.Attribute)):
            return None
        name = text(node)
        function = self.function_at(line)
        found = self.call_graph.parameter(function, name) if function is not None else None
        if function is not None and found is not None and not any(
                self.function_at(s.lineno) is function
                                         for s in self.assignments.get(name, [])
                                         if s.lineno < line):
            for call, given in self.arguments_for(function, name):
                number = self.number_of(given, call.lineno, depth - 1)
                if number is not None:
                    return number
            return self.number_of(default_value(function, found[1]), line, depth - 1)
        stmt = self.assigned_before(name, line)
        return self.number_of(self.value_of(stmt), stmt.lineno, depth - 1) if (
            stmt is not None) else None

    def step_sizes(self) -> list[ast.Constant]:
        """The number literals that set how far a training step goes: an optimizer's ``lr``
        and the factor of ``.grad`` in a hand-written update (``w -= lr * w.grad``), followed
        to where each number is written."""
        given: list[tuple[ast.expr, int]] = []
        for stmt, _, call in self.optimizers():
            lr = next((k.value for k in call.keywords if k.arg == "lr"), None)
            if lr is None and len(call.args) > 1:
                lr = call.args[1]
            if lr is not None:
                given.append((lr, stmt.lineno))
        for stmt in self.statements:
            if isinstance(stmt, ast.AugAssign) and isinstance(stmt.op, ast.Sub) and isinstance(
                    stmt.value, ast.BinOp) and isinstance(stmt.value.op, ast.Mult):
                sides = (stmt.value.left, stmt.value.right)
                grads = [".grad" in text(side) for side in sides]
                if any(grads) and not all(grads):
                    given.append((sides[grads.index(False)], stmt.lineno))
        found = [self.number_of(node, line) for node, line in given]
        return list({id(n): n for n in found if n is not None}.values())

    def as_seen_in(self, stmt: ast.stmt, function: Function) -> str | None:
        """A one-line statement made before the one call of ``function``, written with the
        names the function knows those values by (an argument's parameter; a global as it
        is), to be run inside it; None when it reads a value the function cannot see."""
        calls = self.calls_of(function)
        if len(calls) != 1 or stmt.lineno != stmt.end_lineno:
            return None
        given: dict[str, str] = {}
        for arg in [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs]:
            for _, value in self.arguments_for(function, arg.arg):
                if isinstance(value, ast.Name):
                    given.setdefault(value.id, arg.arg)
        inside = {n for n, stmts in self.assignments.items()
                  if any(self.function_at(s.lineno) is function for s in stmts)}
        raw = self.line(stmt.lineno).encode("utf-8")
        edits = []
        for node in ast.walk(stmt):
            if not isinstance(node, ast.Name):
                continue
            if node.id in given:
                edits.append((node.col_offset, node.end_col_offset or 0, given[node.id]))
            elif node.id in inside or any(self.function_at(s.lineno) is not None
                                          for s in self.assignments.get(node.id, [])):
                return None  # a local of the caller, or shadowed inside the function
        for start, end, new in sorted(edits, reverse=True):
            raw = raw[:start] + new.encode("utf-8") + raw[end:]
        return raw.decode("utf-8").strip()

    def name_at(self, stmt: ast.stmt, name: str) -> str:
        """The name ``stmt`` binds for the value known as ``name`` where it is used: the
        same name, or the caller's (``hidden`` for a parameter ``hidden_in`` it was given,
        where :meth:`assigned_before` followed the call)."""
        targets = [n for t in getattr(stmt, "targets", []) for n in target_names(t)]
        if isinstance(stmt, (ast.AugAssign, ast.AnnAssign, ast.For)):
            targets = target_names(stmt.target)
        return targets[0] if len(targets) == 1 and name not in targets else name

    def made_by(self, stmt: ast.stmt) -> ast.stmt:
        """Where the value a statement assigns was made: the statement itself, or, for
        ``x = make(...)`` of a learner function with one ``return``, that return (and so on,
        a few calls deep)."""
        for _ in range(4):
            value = self.value_of(stmt)
            returns = self.returned(value) if value is not None else []
            if len(returns) != 1:
                break
            stmt = returns[0]
        return stmt

    def value_of(self, stmt: ast.stmt) -> ast.expr | None:
        return stmt.value if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign,
                                               ast.Return)) else None

    # -- facts -------------------------------------------------------------------------
    def uncalled(self, attr: str) -> list[ast.Expr]:
        """Statements that only name a method: ``loss.backward`` without the call."""
        return [s for s in self.statements if isinstance(s, ast.Expr)
                and isinstance(s.value, ast.Attribute) and s.value.attr == attr]

    def names_in(self, node: ast.AST) -> KeysView[str]:
        """The names and attribute chains under ``node``, in the order of ``ast.walk`` (a
        set's order follows string hashing, which changes from process to process: a check
        taking the first fitting name would not give the same diagnosis twice)."""
        return dict.fromkeys(text(n) for n in ast.walk(node)
                             if isinstance(n, (ast.Name, ast.Attribute))).keys()

    def slice_lines(self, name: str, number: int, depth: int = 6) -> set[int]:
        """Lines whose assignments flow into ``name`` as used on the line (a backward slice)."""
        lines: set[int] = set()
        todo = [(name, number)]
        seen: set[tuple[str, int]] = set()
        while todo and depth * 20 > len(seen):
            current, at = todo.pop()
            if (current, at) in seen:
                continue
            seen.add((current, at))
            stmt = self.assigned_before(current, at)
            if stmt is None:
                continue
            lines.add(stmt.lineno)
            value = self.value_of(stmt) or stmt
            for other in self.names_in(value):
                todo.append((other, stmt.lineno))
        return lines

    def runs_before(self, number: int, loop: ast.stmt) -> bool:
        """Whether the line runs once before the loop rather than in it: above it in the same
        function, or in a function (or the module) around the one that holds the loop (the
        value came in as an argument)."""
        stmt = self.statement_at(number)
        if stmt is None or loop in self.ancestors(stmt):
            return False
        here, there = self.function_at(number), self.function_at(loop.lineno)
        if here is there:
            return number < loop.lineno
        return here is None or (there is not None and here in self.ancestors(there))

    def visible(self, stmt: ast.stmt) -> set[str]:
        """Names a statement can read: its function's parameters and the module's names."""
        scope = self.scope_of(stmt)
        names = {n for n, made in self.assignments.items()
                 if any(self.scope_of(s) is self.tree for s in made)}
        if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names |= {a.arg for a in scope.args.args}
        return names

    def optimizers(self) -> list[tuple[ast.stmt, str, ast.Call]]:
        """``(statement, optimizer name, constructor call)`` for ``opt = torch.optim.X(...)``,
        and ``return torch.optim.X(...)`` (a method that builds it) with the name ""."""
        out: list[tuple[ast.stmt, str, ast.Call]] = []
        for stmt in self.statements:
            if isinstance(stmt, (ast.Assign, ast.Return)) and isinstance(stmt.value, ast.Call):
                func = text(stmt.value.func)
                if "optim." in func or func.split(".")[-1] in (
                        "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "LBFGS"):
                    names = target_names(stmt.targets[0]) if isinstance(stmt, ast.Assign) \
                        else [""]
                    for name in names:
                        out.append((stmt, name, stmt.value))
        return out

    def constructor(self, name: str, kind: str | None = None) -> ast.Call | None:
        """The call that builds the module the evidence names ``name`` (``head``,
        ``model.fc``, ``net.2``): an assignment of that name or of ``self.<last part>``, the
        n-th layer of a ``Sequential``, else the only constructor of ``kind`` in the program."""
        parts = name.split(".")
        for candidate in dict.fromkeys([name, f"self.{parts[-1]}", parts[-1]]):
            for stmt in reversed(self.assignments.get(candidate, [])):
                value = self.value_of(stmt)
                if isinstance(value, ast.Call) and (kind is None or call_name(value) == kind):
                    return value
        if len(parts) > 1 and parts[-1].isdigit():
            parent = self.constructor(".".join(parts[:-1]), "Sequential")
            index = int(parts[-1])
            layer = parent.args[index] if parent is not None and index < len(parent.args) \
                else None
            if isinstance(layer, ast.Call):
                return layer
        if kind is not None:
            built = [c for c in self.calls if call_name(c) == kind]
            if len(built) == 1:
                return built[0]
        return None

    def criterion_kind(self, name: str) -> str | None:
        """``CrossEntropyLoss`` when ``name`` was assigned ``nn.CrossEntropyLoss(...)``."""
        for stmt in self.assignments.get(name, []):
            value = self.value_of(stmt)
            if isinstance(value, ast.Call):
                return text(value.func).split(".")[-1]
        return None


def default_value(function: Function, arg: ast.arg) -> ast.expr | None:
    """The default value of a function's parameter, None when it has none."""
    args = function.args
    positional = [*args.posonlyargs, *args.args]
    if arg in positional:
        index = positional.index(arg) - (len(positional) - len(args.defaults))
        return args.defaults[index] if index >= 0 else None
    if arg in args.kwonlyargs:
        return args.kw_defaults[args.kwonlyargs.index(arg)]
    return None

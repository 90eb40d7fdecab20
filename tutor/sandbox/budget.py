"""A budgeted instrumented run: each loop that trains ends once the recording has seen what
the diagnosis reads of it, and the code after the loop runs as written.

A diagnosis reads the first backward() passes and optimizer steps of a run (the recording
keeps only so many: :data:`~tutor.sandbox.evidence.MAX_BACKWARDS` losses,
:data:`~tutor.sandbox.evidence.FULL_STEPS` steps), and what the code after the training does
(a prediction in eval mode, a final error). A fix trial of a program that trains 1500 epochs
needs neither the other 1200 nor a shorter program: its loops end early, nothing else changes.

The learner's program is compiled from its syntax tree with each ``for`` loop's iterable
wrapped (:meth:`Budget.loop`) and each ``while`` test preceded by a call
(:meth:`Budget.more`); no line moves, so every line number the run reports is the learner's.
A loop ends when the budget is spent and its previous iteration ran a backward(): a loop that
trains, not one that prints the predictions afterwards. The first loop that ends so is where
the evidence says the run was cut (:class:`~tutor.sandbox.models.CutEvidence`).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from tutor.sandbox.evidence import Recorder

LOOP = "__tutor_loop__"
MORE = "__tutor_more__"
T = TypeVar("T")


class _Loops(ast.NodeTransformer):
    """Wraps each ``for`` iterable in ``LOOP(iterable, line)`` and each ``while`` test in
    ``MORE(key) and (test)``, each new node at the place of the one it wraps."""

    def visit_For(self, node: ast.For) -> ast.AST:
        self.generic_visit(node)
        call = ast.Call(func=ast.Name(LOOP, ast.Load()),
                        args=[node.iter, ast.Constant(node.lineno)], keywords=[])
        node.iter = ast.copy_location(call, node.iter)
        return node

    def visit_While(self, node: ast.While) -> ast.AST:
        self.generic_visit(node)
        key = ast.Constant(f"{node.lineno}:{node.col_offset}")
        more = ast.copy_location(ast.Call(func=ast.Name(MORE, ast.Load()),
                                          args=[key, ast.Constant(node.lineno)], keywords=[]),
                                 node.test)
        node.test = ast.copy_location(ast.BoolOp(op=ast.And(), values=[more, node.test]),
                                      node.test)
        return node


def compile_budgeted(code: str, filename: str) -> Any:
    """``code`` compiled with its loops budgeted (see the module doc); code that does not
    parse is compiled as it is, so it raises the SyntaxError it always did."""
    try:
        tree = ast.parse(code, filename)
    except (SyntaxError, ValueError):
        return compile(code, filename, "exec")
    tree = ast.fix_missing_locations(_Loops().visit(tree))
    return compile(tree, filename, "exec")


class Budget:
    """Ends the loops that train once ``recorder`` saw ``backwards`` backward() passes and
    ``steps`` optimizer steps."""

    def __init__(self, recorder: Recorder, backwards: int, steps: int) -> None:
        self.rec, self.backwards, self.steps = recorder, backwards, steps
        self.seen: dict[str, int] = {}

    def names(self) -> dict[str, Any]:
        """What the compiled program calls, for its globals."""
        return {LOOP: self.loop, MORE: self.more}

    def spent(self) -> bool:
        """The passes are made, and the steps too (a program that updates its parameters
        by hand, with no optimizer, makes none)."""
        return self.rec.passes >= self.backwards and (
            self.rec.step_calls >= self.steps or not self.rec.step_calls)

    def loop(self, iterable: Iterable[T], line: int) -> Iterator[T]:
        """The items of ``iterable`` until the budget is spent after an iteration that ran
        a backward(); the item fetched then is dropped (the full run fetched it too)."""
        last = None
        for item in iterable:
            if last is not None and self.rec.passes > last and self.spent():
                self.rec.cut_at(line)
                return
            last = self.rec.passes
            yield item

    def more(self, key: str, line: int) -> bool:
        """False once the budget is spent and the loop's previous test came before a
        backward()."""
        last = self.seen.get(key)
        self.seen[key] = self.rec.passes
        if last is not None and self.rec.passes > last and self.spent():
            self.rec.cut_at(line)
            return False
        return True

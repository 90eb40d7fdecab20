"""Automatic cheats: programs that must not pass an exercise, derived from the step itself.

``tutor lint`` grades each of them like a submission and fails the lesson when one passes: a
check that such a program passes does not measure the work. This module only writes the
programs (pure source transformations, no torch); the lint's dynamic half grades them and
adds the cheats that need the reference solution's values (hard-coded results, an error
raised by hand).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from tutor import syntax_tree
from tutor.course.models import AstCheck, CodeStep, FixStep
from tutor.python_names import nodes, parses

MAX_REMOVALS = 8
"""Key lines tried per step: enough for any exercise of this course, bounded for lint's time."""


@dataclass(frozen=True)
class Cheat:
    """A program that must fail the step, and what it tries (``kind``, ``detail``)."""

    kind: str
    """``starter``, ``key_line``, ``hard_coded``, ``routed``, ``raised_by_hand``,
    ``authored``."""
    code: str
    detail: str = ""


def _statements(tree: ast.AST) -> list[ast.stmt]:
    return [node for node in ast.walk(tree) if isinstance(node, ast.stmt)]


def _is_cosmetic(node: ast.stmt) -> bool:
    """Statements whose removal may leave a right answer: imports, prints, docstrings, pass."""
    if isinstance(node, (ast.Import, ast.ImportFrom, ast.Pass)):
        return True
    if isinstance(node, ast.Expr):
        value = node.value
        if isinstance(value, ast.Constant):
            return True
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and (
            value.func.id == "print"
        ):
            return True
    return False


def _own_source(node: ast.stmt) -> str:
    """A statement's code without its body: compound statements compare by their header."""
    if isinstance(node, (ast.For, ast.AsyncFor, ast.While, ast.If, ast.With, ast.AsyncWith,
                         ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Try)):
        header = ast.unparse(node).split("\n", 1)[0]
        return header
    return ast.unparse(node)


def key_statements(solution: str, starter: str) -> list[ast.stmt]:
    """The solution's statements the learner has to write: those the starter lacks.

    A compound statement counts by its header (``while y.detach().norm() < 1000:`` is new
    even when its body is the starter's); imports, prints and docstrings never count."""
    try:
        tree = syntax_tree.parse(solution)
    except SyntaxError:
        return []
    try:
        given = {_own_source(node) for node in _statements(syntax_tree.parse(starter))}
    except SyntaxError:
        given = set()
    found = [node for node in _statements(tree)
             if not _is_cosmetic(node) and _own_source(node) not in given]
    return found[:MAX_REMOVALS]


def without_statement(solution: str, node: ast.stmt) -> str:
    """``solution`` with the lines of ``node`` replaced by ``pass`` at its indentation."""
    lines = solution.splitlines()
    start, end = node.lineno, node.end_lineno or node.lineno
    indent = " " * node.col_offset
    return "\n".join([*lines[: start - 1], f"{indent}pass", *lines[end:]]) + "\n"


def raising_at(solution: str, line: int, exc_type: str, message: str) -> str | None:
    """``solution`` with ``line`` replaced by a hand-written raise of the expected error."""
    lines = solution.splitlines()
    if not 0 < line <= len(lines):
        return None
    target = lines[line - 1]
    indent = target[: len(target) - len(target.lstrip())]
    name = exc_type if exc_type.isidentifier() else "RuntimeError"
    lines[line - 1] = f"{indent}raise {name}({message!r})"
    return "\n".join(lines) + "\n"


def static_cheats(step: CodeStep | FixStep) -> list[Cheat]:
    """The cheats that need no run: the untouched starter in each language, the solution
    with each key line removed, and the author's own (``cheats`` in the lesson)."""
    found: list[Cheat] = []
    starters = dict.fromkeys([step.starters.en, step.starters.zh])
    for number, starter in enumerate(starters):
        label = "" if len(starters) == 1 else ("en" if number == 0 else "zh")
        found.append(Cheat("starter", starter, label))
    for node in key_statements(step.solution, step.starter):
        code = without_statement(step.solution, node)
        if not parses(code):
            continue
        found.append(Cheat("key_line", code, f"line {node.lineno}: {_own_source(node)}"))
    for number, code in enumerate(step.cheats, start=1):
        found.append(Cheat("authored", code, str(number)))
    return found


def uses_forbidden(code: str, check: AstCheck) -> bool:
    """Whether ``code`` does what the rule ``check`` forbids: calls its ``name`` (matched by
    the last dotted part, the way a learner may spell it: ``vector_norm`` for
    ``torch.linalg.vector_norm``, any ``.norm()`` for ``norm``) or reads ``.data``."""
    try:
        tree = syntax_tree.parse(code)
    except SyntaxError:
        return False
    if check.rule == "no_data_attribute":
        return any(isinstance(node, ast.Attribute) and node.attr == "data"
                   for node in nodes(tree))
    if check.rule != "does_not_call" or not check.name:
        return False
    last = check.name.rsplit(".", 1)[-1]
    for node in nodes(tree):
        if isinstance(node, ast.Call):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else (
                func.id if isinstance(func, ast.Name) else None)
            if called == last:
                return True
    return False


def forbidden_without_cheat(step: CodeStep | FixStep) -> list[int]:
    """The checks that forbid an API (``does_not_call``, ``no_data_attribute``) which no
    program of the step tries: neither its starter nor one of its ``cheats``. Each such rule
    needs a cheat that does the task with the forbidden API, for lint to show that it fails."""
    tries = [*dict.fromkeys([step.starters.en, step.starters.zh]), *step.cheats]
    return [number for number, check in enumerate(step.checks)
            if isinstance(check, AstCheck) and check.rule in ("does_not_call", "no_data_attribute")
            and not any(uses_forbidden(code, check) for code in tries)]

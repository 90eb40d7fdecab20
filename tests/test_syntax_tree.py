"""The parent process parses Python behind one lock (:mod:`tutor.syntax_tree`): CPython before
3.12.4 can fail two threads parsing at once with ``SystemError: AST constructor recursion depth
mismatch`` (gh-106905), which once graded a correct submission zero in CI. The sandbox's child
processes run one thread and parse on their own."""

from __future__ import annotations

import ast
import threading
from pathlib import Path

import pytest

from tutor import syntax_tree

TUTOR = Path(__file__).resolve().parents[1] / "tutor"
ONE_THREAD = {"sandbox/child.py", "sandbox/budget.py", "syntax_tree.py"}
"""The child process's own modules, and the lock's."""


def test_no_module_of_the_parent_parses_without_the_lock() -> None:
    direct = []
    for path in sorted(TUTOR.rglob("*.py")):
        where = path.relative_to(TUTOR).as_posix()
        if where in ONE_THREAD:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    node.func.attr == "parse" and isinstance(node.func.value, ast.Name) and \
                    node.func.value.id == "ast":
                direct.append(f"{where}:{node.lineno}")
    assert direct == [], "parse with tutor.syntax_tree.parse, not ast.parse"


def test_it_parses_as_ast_parse_does() -> None:
    assert ast.dump(syntax_tree.parse("x = f(1)")) == ast.dump(ast.parse("x = f(1)"))
    assert isinstance(syntax_tree.parse("a + b", mode="eval"), ast.Expression)
    with pytest.raises(SyntaxError):
        syntax_tree.parse("def (:")


def test_a_parse_waits_for_another_threads_parse() -> None:
    finished: list[str] = []
    with syntax_tree._LOCK:  # another thread is parsing
        worker = threading.Thread(target=lambda: finished.append(
            ast.dump(syntax_tree.parse("y = 2"))))
        worker.start()
        worker.join(timeout=0.2)
        assert worker.is_alive() and finished == []
    worker.join(timeout=5)
    assert finished and "Assign" in finished[0]

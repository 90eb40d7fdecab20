"""``ast.parse`` behind one lock, for the parent process's threads.

Before CPython 3.12.4 (gh-106905) the code that turns a parse into Python objects counts its
recursion depth per interpreter, not per thread: two threads parsing at once (the grader's
workers, a TUI worker beside the main thread) can fail with ``SystemError: AST constructor
recursion depth mismatch``. CI saw it once: a correct submission graded zero while another
submission's diagnosis parsed beside it. Parsing is fast; one lock costs nothing that shows.
"""

from __future__ import annotations

import ast
import threading
from typing import Literal, overload

_LOCK = threading.Lock()


@overload
def parse(source: str, filename: str = ..., mode: Literal["exec"] = ...) -> ast.Module: ...


@overload
def parse(source: str, filename: str = ..., *, mode: Literal["eval"]) -> ast.Expression: ...


def parse(source: str, filename: str = "<unknown>", mode: str = "exec") -> ast.AST:
    with _LOCK:
        return ast.parse(source, filename=filename, mode=mode)

"""Fixes that were tried: a concrete change to the learner's program, applied and re-run in the
sandbox before it is shown. A fix whose re-run does not show the problem gone is never shown.
"""

from __future__ import annotations

import ast
import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from tutor.i18n import Text
from tutor.sandbox.models import Limits, RunResult

VERIFY_LIMITS = Limits(wall_time_s=5.0)


@dataclass(frozen=True)
class Edit:
    """One change to the program's lines (1-based). ``kind``: replace | insert_before |
    insert_after | delete | move_before (``line`` moves above ``to``) | move_after (``line``
    moves below ``to``) | dedent_block."""

    kind: str
    line: int
    text: str = ""
    to: int = 0


Expect = Callable[[RunResult, RunResult], Text | None]
"""(original instrumented run, run of the fixed program) -> what it shows when it worked."""


@dataclass(frozen=True)
class Fix:
    edits: tuple[Edit, ...]
    expect: Expect
    describe: Text = field(default_factory=lambda: Text("", ""))


def indent_of(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def apply(code: str, edits: tuple[Edit, ...]) -> str | None:
    """The program with the edits made, or None when an edit does not fit it."""
    lines = code.splitlines()
    # apply from the bottom up so earlier line numbers stay valid
    order = sorted(edits, key=lambda e: max(e.line, e.to), reverse=True)
    for edit in order:
        if not 1 <= edit.line <= len(lines):
            return None
        i = edit.line - 1
        if edit.kind == "replace":
            lines[i] = edit.text
        elif edit.kind == "insert_before":
            lines.insert(i, indent_of(lines[i]) + edit.text)
        elif edit.kind == "insert_after":
            lines.insert(i + 1, indent_of(lines[i]) + edit.text)
        elif edit.kind == "delete":
            del lines[i]
        elif edit.kind == "move_before":
            if not 1 <= edit.to <= len(lines) or edit.to == edit.line:
                return None
            moved = lines[i].strip()
            target_indent = indent_of(lines[edit.to - 1])
            if edit.to < edit.line:
                del lines[i]
                lines.insert(edit.to - 1, target_indent + moved)
            else:
                lines.insert(edit.to - 1, target_indent + moved)
                del lines[i]
        elif edit.kind == "move_after":
            if not 1 <= edit.to <= len(lines) or edit.to == edit.line:
                return None
            moved = indent_of(lines[edit.to - 1]) + lines[i].strip()
            if edit.to > edit.line:
                lines.insert(edit.to, moved)
                del lines[i]
            else:
                del lines[i]
                lines.insert(edit.to, moved)
        elif edit.kind == "dedent_block":
            # delete a `with ...:` line and dedent the block under it
            head = indent_of(lines[i])
            body = i + 1
            while body < len(lines) and (not lines[body].strip()
                                         or len(indent_of(lines[body])) > len(head)):
                body += 1
            step = None
            for j in range(i + 1, body):
                if lines[j].strip():
                    step = len(indent_of(lines[j])) - len(head)
                    break
            if step is None or step <= 0:
                return None
            for j in range(i + 1, body):
                if lines[j].strip():
                    lines[j] = lines[j][step:]
            del lines[i]
        else:
            return None
    return "\n".join(lines) + "\n"


def diff(before: str, after: str) -> str:
    return "".join(difflib.unified_diff(before.splitlines(True), after.splitlines(True),
                                        "your program", "with the change", n=1))


def replace_in_line(code: str, line: int, pattern: str, repl: str, count: int = 1) -> Edit | None:
    """An edit that rewrites part of one line (a regex substitution), None if it does not fit."""
    lines = code.splitlines()
    if not 1 <= line <= len(lines):
        return None
    new, n = re.subn(pattern, repl, lines[line - 1], count=count)
    if n == 0 or new == lines[line - 1]:
        return None
    return Edit("replace", line, new)


def replace_node(code: str, node: ast.AST, new: str) -> Edit | None:
    """An edit that puts ``new`` in place of the source of ``node`` (a node on one line)."""
    lineno, end = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
    start_col, end_col = getattr(node, "col_offset", None), getattr(node, "end_col_offset", None)
    lines = code.splitlines()
    if lineno is None or lineno != end or start_col is None or end_col is None or not (
            1 <= lineno <= len(lines)):
        return None
    raw = lines[lineno - 1].encode("utf-8")  # the offsets count UTF-8 bytes
    line = (raw[:start_col] + new.encode("utf-8") + raw[end_col:]).decode("utf-8", "replace")
    return None if line == lines[lineno - 1] else Edit("replace", lineno, line)


def losses(result: RunResult) -> list[float]:
    if result.evidence is None:
        return []
    return [b.loss for b in result.evidence.backwards if isinstance(b.loss, float)]

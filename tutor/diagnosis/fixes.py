"""Fixes that were tried: a concrete change to the learner's program, applied and re-run in the
sandbox before it is shown. A fix whose re-run does not show the problem gone is never shown.
"""

from __future__ import annotations

import ast
import difflib
import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from tutor.diagnosis.source import source_text
from tutor.i18n import Text
from tutor.sandbox.evidence import FULL_STEPS, MAX_BACKWARDS
from tutor.sandbox.models import Limits, RunBudget, RunResult

VERIFY_LIMITS = Limits.model_validate({"wall_time_s": 5.0})
SERIES = RunBudget(backwards=MAX_BACKWARDS, steps=FULL_STEPS)
"""How much of a training the checks of a silent bug read, its re-run's and its fix trials':
what the recording keeps (the losses of the first backward() passes, the first steps) and
the code after the training. A program that trains longer ends its training there."""
FIRST_PASSES = RunBudget(backwards=2, steps=2)
"""How much of a training an :class:`Early` expectation reads."""


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
class Early:
    """An expectation on what every forward pass and step of the fixed program shows (how
    its model is built, what a layer gives the next), not on how its training goes: the
    first passes of the training decide it (:data:`FIRST_PASSES`)."""

    expect: Expect

    def __call__(self, original: RunResult, fixed: RunResult) -> Text | None:
        return self.expect(original, fixed)


@dataclass(frozen=True)
class Fix:
    edits: tuple[Edit, ...]
    expect: Expect
    describe: Text = field(default_factory=lambda: Text("", ""))
    keeps: Expect | None = None
    """What the change must leave as the program had it, beyond what every fix keeps
    (:func:`tutor.diagnosis.verify.hides_bug`): (original run, fixed run) -> what the fixed
    run changed, None when it kept it. A change that restores a graph must not change the
    values computed (:func:`tutor.diagnosis.verify.same_loss`)."""

    def budget(self, rerun: RunBudget | None) -> RunBudget | None:
        """How much of its fixed program's training the trial runs, given the re-run's
        budget: what its expectation reads (:data:`FIRST_PASSES` for an :class:`Early` one),
        and never less than the re-run had where that was whole (an error's re-run: the fixed
        program must run to its end)."""
        if rerun is None:
            return None
        return FIRST_PASSES if isinstance(self.expect, Early) else rerun


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


HUNK = re.compile(r"@@ -(?P<start>\d+)(?:,(?P<count>\d+))? \+\d+(?:,\d+)? @@")


def patched(before: str, patch: str) -> str | None:
    """``before`` with a unified diff of :func:`diff` applied; None where the diff's context
    is not ``before``'s."""
    src, rows = before.splitlines(), patch.splitlines()
    out: list[str] = []
    at, i = 0, next((k for k, row in enumerate(rows) if row.startswith("@@")), len(rows))
    while i < len(rows):
        hunk = HUNK.match(rows[i])
        if hunk is None:
            return None
        start = int(hunk["start"]) - (0 if hunk["count"] == "0" else 1)
        if start < at:
            return None
        out += src[at:start]
        at, i = start, i + 1
        while i < len(rows) and not rows[i].startswith("@@"):
            tag, body = rows[i][:1], rows[i][1:]
            if tag in (" ", "-"):
                if at >= len(src) or src[at] != body:
                    return None
                at += 1
            if tag in (" ", "+"):
                out.append(body)
            i += 1
    return "\n".join(out + src[at:]) + "\n"


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
    return replace_nodes(code, [(node, new)])


def replace_nodes(code: str, changes: list[tuple[ast.AST, str]]) -> Edit | None:
    """One edit that puts new source in place of several nodes of one line (none inside
    another), right to left so the offsets stay valid."""
    lines = code.splitlines()
    spans = []
    for node, new in changes:
        lineno, end = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
        start, stop = getattr(node, "col_offset", None), getattr(node, "end_col_offset", None)
        if lineno is None or lineno != end or start is None or stop is None:
            return None
        spans.append((lineno, start, stop, new))
    if not spans or len({s[0] for s in spans}) != 1 or not 1 <= spans[0][0] <= len(lines):
        return None
    spans.sort(key=lambda s: s[1])
    if any(a[2] > b[1] for a, b in itertools.pairwise(spans)):
        return None  # overlapping
    raw = lines[spans[0][0] - 1].encode("utf-8")
    for _, start, stop, new in reversed(spans):
        raw = raw[:start] + new.encode("utf-8") + raw[stop:]
    line = raw.decode("utf-8", "replace")
    return None if line == lines[spans[0][0] - 1] else Edit("replace", spans[0][0], line)


def node_fix(code: str, node: ast.AST, new: str, expect: Expect, describe: Text
             ) -> Fix | None:
    """A fix that puts ``new`` in place of one node's source, None if it does not fit."""
    edit = replace_node(code, node, new)
    return Fix((edit,), expect, describe) if edit is not None else None


def postfix(node: ast.expr, suffix: str) -> str:
    """``node``'s source followed by ``suffix`` (``.float()``), in parentheses when needed."""
    source = source_text(node)
    simple = isinstance(node, (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant))
    return f"{source}{suffix}" if simple else f"({source}){suffix}"


def suffix_value(code: str, stmt: ast.stmt | None, suffix: str, op: str | None = None
                 ) -> Edit | None:
    """An edit that appends ``suffix`` to the value a statement assigns or returns, or to
    the call of ``op`` in it (where the tensor was made)."""
    if stmt is None:
        return None
    value = stmt.value if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.Return)) else None
    if op is not None and not (isinstance(value, ast.Call) and _called(value) == op):
        value = next((n for n in ast.walk(stmt) if isinstance(n, ast.Call)
                      and _called(n) == op), value)
    if value is None:
        return None
    return replace_node(code, value, postfix(value, suffix))


def _called(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else (
        func.id if isinstance(func, ast.Name) else "")


def losses(result: RunResult) -> list[float]:
    if result.evidence is None:
        return []
    return [b.loss for b in result.evidence.backwards if isinstance(b.loss, float)]

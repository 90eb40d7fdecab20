"""Code as learners paste it into forum posts, made into the Python it was: the marks that
copying adds are taken away, so the code can be read and run like the learner's own.

Three kinds of mark, each seen in real posts: the indentation a Markdown code block or a
quote adds (often with the first line's lost, when the text was copied from the middle of a
line), the prompts of an interactive session (``>>> `` and ``... ``, with the output
between them), and Python 2's ``print x`` and ``xrange`` of posts from before 2020. A
repair is kept only when the code did not parse before and parses after it; the one change
made to code that parses is ``xrange`` (a NameError when run), where the code defines none.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable

from tutor.python_names import parses

_PROMPT_RE = re.compile(r"^\s*(>>>|\.\.\.)( |$)")
_PRINT_RE = re.compile(r"^(\s*)print(?:\s+(?![\s=(.,)\[])(.*?))?\s*$")
_XRANGE_RE = re.compile(r"\bxrange\(")


def as_python(code: str) -> str:
    """``code`` with the marks of copying taken away, when that makes it parse; else as
    it is."""
    if parses(code):
        return _range(code)
    repaired = code
    for repair in _REPAIRS:  # each on what the ones before left: a post may show all three
        repaired = repair(repaired)
        if parses(repaired):
            return _range(repaired)
    return code


def _session(code: str) -> str:
    """The statements of an interactive session: the prompted lines without their prompts;
    the lines between them are what the session printed."""
    lines = code.splitlines()
    if not any(line.lstrip().startswith(">>>") for line in lines):
        return code
    kept = [_PROMPT_RE.sub("", line, count=1) for line in lines if _PROMPT_RE.match(line)]
    return "\n".join(kept)


def _indentation(code: str) -> str:
    """Without the indentation common to every line; when the first line lost its own (it
    was copied from its first character on), the lines after it lose what they share."""
    code = textwrap.dedent(code)
    lines = code.splitlines()
    body = [line for line in lines[1:] if line.strip()]
    if not lines or not body or lines[0][:1].isspace() or lines[0].rstrip().endswith(":"):
        return code
    shared = min(len(line) - len(line.lstrip()) for line in body)
    if shared == 0:
        return code
    return "\n".join([lines[0], *(line[shared:] if line.strip() else "" for line in lines[1:])])


def _python2(code: str) -> str:
    """Python 2's print statement and ``xrange``, as Python 3 writes them."""
    lines = []
    for line in code.splitlines():
        match = _PRINT_RE.match(line)
        if match is not None and not line.rstrip().endswith(":"):
            indent, args = match.groups()
            line = f"{indent}print({args or ''})"
        lines.append(line)
    return "\n".join(lines)


def _range(code: str) -> str:
    """Python 2's ``xrange``, which parses but fails when run, as ``range`` (unless the code
    defines an ``xrange`` of its own)."""
    if not _XRANGE_RE.search(code) or re.search(r"\bxrange\s*=|def\s+xrange\b|import.*\bxrange\b",
                                                code):
        return code
    return _XRANGE_RE.sub("range(", code)


_REPAIRS: tuple[Callable[[str], str], ...] = (_session, _indentation, _python2)

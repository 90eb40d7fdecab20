""""What does this print?": the learner's pasted snippet, found in the question and run.

The snippet is the question's fenced code, or else its run of statements (``x = ...;
y.backward(); print(x.grad)``, one a line or separated by ``;``) up to the words that ask.
It is run like any learner code: in the confined sandbox, with its limits. What it printed
is shown only when it gives away no exercise's expected values (the caller checks it against
the open step's and the pasted exercise's secrets).
"""

from __future__ import annotations

import ast
import re

from tutor.markdown_fences import fenced_pieces

_STATEMENT_RE = re.compile(
    r"^\s*(import |from |print\(|\(|[A-Za-z_][\w.\[\]]*\s*(=|\+=|-=|\*=)|[A-Za-z_][\w.]*\(|"
    r"with |for |if )"
)
_ASK_RE = re.compile(
    r"\s*(what (will|would|does|do)|what is|会打印|打印出|会输出|输出是|打印什么|这段|这会).*$",
    re.IGNORECASE | re.DOTALL,
)


def snippet(question: str) -> str | None:
    """The code the question pastes, as a runnable program (``import torch`` added), or None
    when it pastes none that parses."""
    fenced = [p.code for p in fenced_pieces(question)
              if p.code is not None and p.lang in ("", "python", "py")]
    if fenced:
        code = "\n".join(block.strip("\n") for block in fenced)
    else:
        text = _ASK_RE.sub("", question)
        # statements separated by ';' or newlines; prose around them is dropped
        parts = [p.strip() for p in re.split(r";|\n|。|，(?=[A-Za-z_])", text)]
        statements = [p.rstrip(".。?？ ") for p in parts if _STATEMENT_RE.match(p)]
        code = "\n".join(statements)
    if "print(" not in code:
        return None
    if "import torch" not in code:
        code = "import torch; " + code  # on the first line: error lines stay the learner's
    try:
        ast.parse(code)
    except SyntaxError:
        return None
    return code

"""Whether a catalog entry's fix, as shown, proposes a concrete change to this program or a
procedure to follow.

A concrete change is written with the run's facts in its code (`{name}.append({op}.item())`,
`in_channels={got}`, `torch.mm({var_code}, {var2_code}.t())`): when a re-run refuted the
change that fits the error, such advice is the refuted change, and it is not shown. A
procedure names no fact of the run in code, or only to look at values (`print({var_code}
.shape)`, `nn.ModuleList`, `requires_grad=True`): it stays sound whatever one change did.
"""

from __future__ import annotations

import ast
import re

from tutor.diagnosis.catalog import Entry, placeholders
from tutor.i18n import Text

CODE_SPAN = re.compile(r"`([^`\n]+)`")
LOOKING = frozenset({"print", "type", "len", "isinstance", "id", "repr"})
"""Calls that look at values without changing what the program does."""


def _template_regex(template: str) -> re.Pattern[str]:
    parts = re.split(r"\{[a-z_0-9]+\}", template)
    return re.compile(".+?".join(re.escape(p) for p in parts) + r"\Z", re.DOTALL)


def _looks_only(span: str) -> bool:
    """A span whose code only looks at values: ``print(x.shape)``."""
    try:
        node = ast.parse(span.replace("{", "").replace("}", ""), mode="eval").body
    except SyntaxError:
        return False
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and (
        node.func.id in LOOKING)


def concrete(template: str) -> bool:
    """The template writes a fact of the run into code that changes the program."""
    return any(placeholders(span) and not _looks_only(span)
               for span in CODE_SPAN.findall(template))


def proposes_change(entry: Entry, shown: Text) -> bool:
    """The entry's fix words that gave ``shown`` (the first of its options whose template
    fits it) write a fact of the run into changing code; False when none fits (the words
    came from elsewhere: no catalog template is judged)."""
    for option in entry.options("fix"):
        if _template_regex(option.en).match(shown.en):
            return concrete(option.en)
    return False

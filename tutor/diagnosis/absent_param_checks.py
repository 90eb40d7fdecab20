"""A layer's ``bias`` or ``weight`` that is None because the layer was built without it
(``bias=False``, ``affine=False``, ``elementwise_affine=False``): code that initialises or
reads it for every layer of a kind ("'NoneType' object has no attribute 'data'", or
``nn.init.constant_(m.weight, 1)`` failing inside torch) fails on the layers built so. The
constructor is named, and guarding the statement with ``is not None`` is the change tried."""

from __future__ import annotations

import ast
import re

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import Edit, Fix
from tutor.diagnosis.flow import call_name, text
from tutor.diagnosis.verify import runs_clean
from tutor.i18n import T
from tutor.sandbox.models import ValueSnapshot

NONE_ATTR = re.compile(r"'NoneType' object has no attribute '\w+'")
WITHOUT = {"bias": ("bias", "affine", "elementwise_affine"),
           "weight": ("affine", "elementwise_affine")}
"""The constructor flags that leave a layer without that parameter."""


def check_absent_parameter(ctx: Ctx) -> list[Candidate]:
    if ctx.error is None or ctx.error.type != "AttributeError" or not NONE_ATTR.search(
            ctx.message):
        return []
    line, stmt = ctx.failing_statement()
    if not isinstance(stmt, (ast.Expr, ast.Assign, ast.AugAssign)) or stmt.lineno != (
            stmt.end_lineno):
        return []
    out: list[Candidate] = []
    for node in ast.walk(stmt):
        if not (isinstance(node, ast.Attribute) and node.attr in WITHOUT
                and isinstance(node.value, (ast.Name, ast.Attribute))):
            continue
        owner, attr = text(node.value), node.attr
        if isinstance(node.value, ast.Name):  # a loop's layer: its kind from the frame
            snap = ctx.error.locals.get(owner)
            kind = snap.type if isinstance(snap, ValueSnapshot) else None
            calls = [c for c in ctx.flow.calls if kind is None or call_name(c) == kind]
        else:  # a layer the program names (self.fc): where it is built
            made = ctx.flow.constructor(owner)
            calls = [made] if made is not None else []
        built = [call for call in calls if any(
            k.arg in WITHOUT[attr] and isinstance(k.value, ast.Constant)
            and k.value.value is False for k in call.keywords)]
        if not built:
            continue
        made = built[0]
        flag = next(k.arg for k in made.keywords if k.arg in WITHOUT[attr])
        text_line = ctx.flow.line(line)
        indent = text_line[:len(text_line) - len(text_line.lstrip())]
        name = f"{owner}.{attr}"
        guard = Edit("replace", line, f"{indent}if {name} is not None: {text_line.strip()}")
        fill: dict[str, object] = {"line": line, "layer_line": made.lineno, "fail_line": line,
                                   "name": name, "module": call_name(made),
                                   "detail": f"{flag}=False"}
        out.append(Candidate("parameter-absent", line, 0.9, [("built-without", fill)], [
            Fix((guard,), runs_clean, T(
                f"touch `{name}` only where the layer has one: `if {name} is not None:` on "
                f"line {line}",
                f"只在该层有它时才处理 `{name}`：第 {line} 行加上 `if {name} is not None:`"))],
            fill))
        break
    return out


EXCEPTION_CHECKS: tuple[Check, ...] = (check_absent_parameter,)
SILENT_CHECKS: tuple[Check, ...] = ()

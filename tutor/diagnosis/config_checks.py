"""A number in a YAML config that PyYAML reads as a string: YAML 1.1, which PyYAML follows,
reads ``1e-5`` as the text '1e-5' (a float needs a dot: ``1.0e-5``), so an optimizer or a
scheduler built from the config gets ``lr='1e-5'`` and fails comparing or multiplying it
("'<=' not supported between instances of 'float' and 'str'"). The config's own line is the
root; writing each such number with a dot is the change tried."""

from __future__ import annotations

import ast
import re

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import Edit, Fix
from tutor.diagnosis.flow import call_name
from tutor.diagnosis.verify import runs_clean
from tutor.i18n import T

LOADS = frozenset({"safe_load", "load", "full_load", "unsafe_load"})
STRING_MET = re.compile(r"'str'|\bstr\b")
# a mapping's value in exponent form without a dot: a string to YAML 1.1
EXPONENT = re.compile(r"^(?P<head>\s*-?\s*[\w.-]+\s*:\s*)(?P<num>[-+]?\d[\d_]*)[eE]"
                      r"(?P<exp>[-+]?\d+)(?P<tail>\s*(?:#.*)?)$")


def check_yaml_number_string(ctx: Ctx) -> list[Candidate]:
    if ctx.error is None or ctx.error.type != "TypeError" or not STRING_MET.search(ctx.message):
        return []
    tree = ctx.flow.tree
    if not any(isinstance(c, ast.Call) and call_name(c) in LOADS and "yaml" in ast.unparse(c.func)
               for c in ast.walk(tree)):
        return []
    lines = ctx.code.splitlines()
    found: list[tuple[int, str, str, str]] = []  # line, key, written, with a dot
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)
                and "\n" in node.value and node.end_lineno is not None):
            continue
        for number in range(node.lineno, node.end_lineno + 1):
            hit = EXPONENT.match(lines[number - 1])
            if hit is None:
                continue
            written = f"{hit['num']}e{hit['exp']}"
            dotted = f"{hit['num']}.0e{hit['exp']}"
            found.append((number, hit["head"].strip().rstrip(":").strip(), written, dotted))
    if not found:
        return []
    edits = tuple(Edit("replace", number, EXPONENT.sub(
        lambda m: f"{m['head']}{m['num']}.0e{m['exp']}{m['tail']}", lines[number - 1]))
        for number, *_ in found)
    # the learning rate is what an optimizer checks first; else the first such number
    line, key, written, dotted = next((f for f in found if f[1] in ("lr", "learning_rate")),
                                      found[0])
    fill: dict[str, object] = {"line": line, "name": key, "value": written, "new": dotted,
                               "fail_line": ctx.fail_line}
    many = len(found) > 1
    return [Candidate("yaml-number-as-string", line, 0.9, [("yaml-exponent", fill)], [
        Fix(edits, runs_clean, T(
            f"write {'each such number' if many else f'`{written}`'} with a dot "
            f"(`{key}: {dotted}`{' and the others alike' if many else ''})",
            f"把{'每个这样的数' if many else f'`{written}`'}写成带小数点的形式"
            f"（`{key}: {dotted}`{'，其余同样' if many else ''}）"))], fill)]


EXCEPTION_CHECKS: tuple[Check, ...] = (check_yaml_number_string,)
SILENT_CHECKS: tuple[Check, ...] = ()

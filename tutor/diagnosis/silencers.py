"""Code that keeps an error from showing: ``load_state_dict(..., strict=False)``, which loads
what matches and says nothing of the rest, and an ``except`` that passes. A silent program with
one is run again without it; an error it then raises is what it hid, and that error's diagnosis
is the silent bug's (see :func:`tutor.diagnosis.reasoning.diagnose_with_evidence`)."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from tutor.diagnosis.fixes import Edit, apply, replace_node
from tutor.diagnosis.flow import Flow, call_name
from tutor.i18n import T, Text

CAUGHT_ALL = frozenset({"Exception", "BaseException", "RuntimeError"})


@dataclass(frozen=True)
class Silencer:
    line: int
    code: str
    """The program without it: ``strict=True``, an ``except`` that raises."""
    what: Text
    undo: Text
    """The change that takes it away, in words (it is made in the program above)."""


def silencers(code: str, flow: Flow) -> list[Silencer]:
    out = []
    for node in ast.walk(flow.tree):
        if isinstance(node, ast.Call) and call_name(node) == "load_state_dict":
            for keyword in node.keywords:
                if keyword.arg == "strict" and isinstance(keyword.value, ast.Constant) and \
                        keyword.value.value is False:
                    at = keyword.value.lineno
                    found = _without(code, replace_node(code, keyword.value, "True"), at,
                                     T("`strict=False`", "`strict=False`"), T(
                                         f"load with `strict=True` on line {at}, so that keys "
                                         "that do not match raise an error",
                                         f"第 {at} 行用 `strict=True` 加载，键名不匹配时就会报错"))
                    out += [found] if found else []
        elif isinstance(node, ast.ExceptHandler) and _catches_all(node) and len(node.body) == 1 \
                and isinstance(node.body[0], (ast.Pass, ast.Continue)):
            quiet = node.body[0]
            line = code.splitlines()[quiet.lineno - 1]
            word = "pass" if isinstance(quiet, ast.Pass) else "continue"
            edit = Edit("replace", quiet.lineno, line.replace(word, "raise", 1))
            found = _without(code, edit, node.lineno,
                             T(f"the `except` that does `{word}`", f"只做 `{word}` 的 `except`"),
                             T(f"let the error through on line {quiet.lineno} (`raise` instead "
                               f"of `{word}`)",
                               f"第 {quiet.lineno} 行让错误显示出来（用 `raise` 代替 `{word}`）"))
            out += [found] if found else []
    return sorted(out, key=lambda s: s.line)


def _catches_all(handler: ast.ExceptHandler) -> bool:
    kind = handler.type
    return kind is None or (isinstance(kind, ast.Name) and kind.id in CAUGHT_ALL)


def _without(code: str, edit: Edit | None, line: int, what: Text, undo: Text
             ) -> Silencer | None:
    changed = apply(code, (edit,)) if edit is not None else None
    return Silencer(line, changed, what, undo) if changed is not None else None

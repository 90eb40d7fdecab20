"""``padding="same"`` on a strided convolution: torch pads "same" only where the output keeps
the input's size, which a stride does not (TensorFlow's "SAME" pads unevenly to give
``ceil(size / stride)``). The usual padding of an odd kernel, ``kernel_size // 2``, gives that
size; it is written for each strided "same" convolution the failing statement builds, and
tried."""

from __future__ import annotations

import ast

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import Edit, Fix, replace_node
from tutor.diagnosis.flow import call_name, text
from tutor.diagnosis.verify import runs_clean
from tutor.i18n import T

CONVS = frozenset({"Conv1d", "Conv2d", "Conv3d"})
MESSAGE = "padding='same' is not supported for strided convolutions"


def _keyword(call: ast.Call, name: str, position: int) -> ast.expr | None:
    found = next((k.value for k in call.keywords if k.arg == name), None)
    return found if found is not None or position >= len(call.args) else call.args[position]


def _half(kernel: ast.expr) -> str | None:
    """``kernel_size // 2`` written out: 7 -> 3, (7, 7) -> (3, 3), k -> k // 2."""
    if isinstance(kernel, ast.Constant) and isinstance(kernel.value, int):
        return str(kernel.value // 2)
    if isinstance(kernel, ast.Tuple) and all(isinstance(e, ast.Constant) and isinstance(
            e.value, int) for e in kernel.elts):
        return "(" + ", ".join(str(e.value // 2) for e in kernel.elts  # type: ignore[attr-defined]
                               ) + ")"
    if isinstance(kernel, ast.Name):
        return f"{kernel.id} // 2"
    return None


def check_same_padding_strided(ctx: Ctx) -> list[Candidate]:
    if MESSAGE not in ctx.message:
        return []
    line, stmt = ctx.failing_statement()
    if stmt is None:  # a layer in a statement of several lines (``nn.Sequential(...)``)
        stmt = next((s for s in reversed(ctx.flow.statements) if s.lineno <= line <= (
            s.end_lineno or s.lineno)), None)
    edits: list[Edit] = []
    first: tuple[ast.Call, str] | None = None
    for call in (n for n in ast.walk(stmt) if isinstance(n, ast.Call)) if stmt else ():
        padding = next((k.value for k in call.keywords if k.arg == "padding"), None)
        stride = _keyword(call, "stride", 3)
        kernel = _keyword(call, "kernel_size", 2)
        if call_name(call) not in CONVS or padding is None or kernel is None or \
                stride is None or text(padding).strip("'\"").lower() != "same":
            continue
        half = _half(kernel)
        edit = replace_node(ctx.code, padding, half) if half is not None else None
        if edit is None or half is None:
            return []
        edits.append(edit)
        first = first or (call, half)
    if first is None:
        return []
    call, half = first
    where = call.lineno
    fill: dict[str, object] = {"line": where, "expr": f"padding={half}"}
    return [Candidate("same-padding-strided", where, 0.9, [("same-padding", fill)], [
        Fix(tuple(edits), runs_clean, T(
            f"pad by half the kernel on line {where}: `padding={half}` (the output is then the "
            "input's size divided by the stride, rounded up, as TensorFlow's 'SAME' gives)",
            f"第 {where} 行按卷积核的一半填充：`padding={half}`（输出大小就是输入大小除以步长并向上"
            "取整，与 TensorFlow 的 'SAME' 相同）"))], fill)]


EXCEPTION_CHECKS: tuple[Check, ...] = (check_same_padding_strided,)
SILENT_CHECKS: tuple[Check, ...] = ()

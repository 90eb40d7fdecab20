"""``gradcheck`` given float32 (or half) inputs: it estimates the Jacobian by finite
differences with a step of 1e-6, which float32's seven digits turn into rounding noise, so a
correct ``backward`` fails the comparison. The failing frame's locals show the inputs' dtype;
the fix makes each input float64 where it is made, and the trial runs gradcheck again.
"""

from __future__ import annotations

import ast

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import Edit, Fix, replace_node
from tutor.diagnosis.flow import call_name, text
from tutor.diagnosis.graph_checks import FRESH
from tutor.diagnosis.verify import runs_clean
from tutor.i18n import T
from tutor.sandbox.models import TensorSnapshot

CHECKERS = frozenset({"gradcheck", "gradgradcheck"})
LOW_PRECISION = frozenset({"torch.float32", "torch.float16", "torch.bfloat16"})


def check_gradcheck_float32(ctx: Ctx) -> list[Candidate]:
    error = ctx.error
    if error is None or error.type != "GradcheckError" or ctx.fail_line is None:
        return []
    stmt = ctx.flow.statement_at(ctx.fail_line)
    call = next((n for n in ast.walk(stmt) if isinstance(n, ast.Call) and
                 call_name(n) in CHECKERS and len(n.args) >= 2), None) if stmt else None
    if call is None:
        return []
    inputs = call.args[1]
    names = [e.id for e in (inputs.elts if isinstance(inputs, (ast.Tuple, ast.List))
                            else [inputs]) if isinstance(e, ast.Name)]
    low = [n for n in names if isinstance(error.locals.get(n), TensorSnapshot)
           and error.locals[n].dtype in LOW_PRECISION]  # type: ignore[union-attr]
    if not low:
        return []
    edits: list[Edit] = []
    lines: list[int] = []
    for name in low:
        made = ctx.flow.assigned_before(name, ctx.fail_line)
        value = ctx.flow.value_of(made) if made is not None else None
        edit = _as_float64(ctx.code, value)
        if made is None or edit is None:
            return []
        edits.append(edit)
        lines.append(made.lineno)
    dtype = error.locals[low[0]].dtype  # type: ignore[union-attr]
    shown = ", ".join(f"`{n}`" for n in low)
    where = ", ".join(str(n) for n in dict.fromkeys(lines))
    en = (f"make {shown} float64 where {'it is' if len(low) == 1 else 'they are'} made "
          f"(line {where}): `dtype=torch.float64`")
    zh = f"在创建 {shown} 的地方（第 {where} 行）把它改成 float64：`dtype=torch.float64`"
    module = _module_as_float64(ctx, call.args[0])
    if module is not None:  # a layer checked with float64 inputs needs float64 weights too
        edits.append(module[1])
        layer = text(call.args[0])
        en += f", and the layer `{layer}` too (line {module[0]}: `.double()`)"
        zh += f"；层 `{layer}` 也一样（第 {module[0]} 行：`.double()`）"
    fix = Fix(tuple(edits), runs_clean, T(en, zh))
    facts = {"line": lines[0], "fail_line": ctx.fail_line, "name": shown, "dtype": dtype}
    return [Candidate("gradcheck-float32", lines[0], 0.9,
                      [("gradcheck-low-precision", facts)], [fix], facts)]


def _module_as_float64(ctx: Ctx, checked: ast.expr) -> tuple[int, Edit] | None:
    """The layer gradcheck checks (``gradcheck(conv, ...)``, ``conv = nn.Conv1d(...)``) made
    float64 where it is built: its weights must match the inputs' dtype."""
    if not isinstance(checked, ast.Name) or ctx.fail_line is None:
        return None
    made = ctx.flow.assigned_before(checked.id, ctx.fail_line)
    value = ctx.flow.value_of(made) if made is not None else None
    if made is None or not isinstance(value, ast.Call) or not call_name(value)[:1].isupper():
        return None
    edit = replace_node(ctx.code, value, f"{text(value)}.double()")
    return (made.lineno, edit) if edit is not None else None


def _as_float64(code: str, value: ast.expr | None) -> Edit | None:
    """The factory call that makes an input, with ``dtype=torch.float64`` (its own dtype
    replaced); None when the value is not such a call."""
    if not isinstance(value, ast.Call) or call_name(value) not in FRESH:
        return None
    rest = [k for k in value.keywords if k.arg != "dtype"]
    args = [text(a) for a in value.args] + [
        f"{k.arg}={text(k.value)}" if k.arg else f"**{text(k.value)}" for k in rest]
    new = f"{text(value.func)}({', '.join([*args, 'dtype=torch.float64'])})"
    return replace_node(code, value, new)


EXCEPTION_CHECKS: tuple[Check, ...] = (check_gradcheck_float32,)
SILENT_CHECKS: tuple[Check, ...] = ()

"""Comparing a value from the learner's run with the truth, in the parent process.

Both sides arrive as plain data (snapshots or literals), so nothing the learner's process did
to ``torch.allclose``, ``==`` or builtins can influence the result. A NaN never equals
anything, not even another NaN.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from tutor.grading.feedback import (
    cap,
    catalog,
    fmt_index,
    fmt_scalar,
    fmt_shape,
    fmt_values,
    msg,
)
from tutor.i18n import Text
from tutor.sandbox.models import Snapshot, TensorSnapshot, ValueSnapshot

Kind = Literal["tensor", "sequence", "number", "bool", "none", "str", "other"]

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
_NON_FINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


@dataclass(frozen=True)
class Normal:
    """A value reduced to what comparison needs."""

    kind: Kind
    type_name: str
    shape: tuple[int, ...] | None = None
    flat: list[Any] | None = None
    dtype: str | None = None
    scalar: Any = None
    text: str = ""

    def describe(self) -> str:
        if self.kind == "tensor":
            return f"tensor of shape {fmt_shape(self.shape or ())}"
        return self.type_name


@dataclass(frozen=True)
class Comparison:
    ok: bool
    message: Text
    output: Text | None = None


def _scalar(value: Any) -> Any:
    if isinstance(value, str) and value in _NON_FINITE:
        return _NON_FINITE[value]
    return value


def _flatten(values: Any) -> tuple[tuple[int, ...], list[Any]] | None:
    """Shape and flat elements of a rectangular nested list; ``None`` if ragged."""
    if not isinstance(values, (list, tuple)):
        return (), [_scalar(values)]
    if not values:
        return (0,), []
    parts = [_flatten(v) for v in values]
    if any(p is None for p in parts):
        return None
    shapes = {p[0] for p in parts if p is not None}
    if len(shapes) != 1:
        return None
    flat = [x for p in parts if p is not None for x in p[1]]
    return (len(values), *shapes.pop()), flat


def _from_python(value: Any, type_name: str | None = None, text: str = "") -> Normal:
    name = type_name or type(value).__name__
    if value is None and name in ("NoneType", "None"):
        return Normal("none", "None", text="None")
    if isinstance(value, bool):
        return Normal("bool", name, scalar=value, text=str(value))
    if isinstance(value, (int, float)) or (isinstance(value, str) and value in _NON_FINITE):
        number = _scalar(value)
        return Normal(
            "number", name, shape=(), flat=[number], scalar=number, text=fmt_scalar(number)
        )
    if isinstance(value, str):
        return Normal("str", name, scalar=value, text=repr(value))
    if isinstance(value, (list, tuple)):
        flat = _flatten(list(value))
        if flat is not None and all(isinstance(x, (bool, int, float)) for x in flat[1]):
            return Normal("sequence", name, shape=flat[0], flat=flat[1], text=fmt_values(value))
        return Normal("other", name, scalar=value, text=repr(value))
    return Normal("other", name, text=text or repr(value))


def normalize(value: Snapshot | Any) -> Normal:
    """A snapshot from a run, or a literal from a lesson, as a :class:`Normal`."""
    if isinstance(value, TensorSnapshot):
        shape = tuple(value.shape)
        flat = None
        if value.values is not None and not value.truncated:
            flattened = _flatten(value.values)
            flat = flattened[1] if flattened is not None else None
        text = fmt_values(value.values) if value.values is not None else "..."
        return Normal("tensor", "Tensor", shape=shape, flat=flat, dtype=value.dtype, text=text)
    if isinstance(value, ValueSnapshot):
        if value.value is None and value.type not in ("NoneType",):
            return Normal("other", value.type, text=value.repr)
        return _from_python(value.value, value.type, value.repr)
    return _from_python(value)


def elements_equal(got: Any, expected: Any, rtol: float, atol: float) -> bool:
    if isinstance(got, bool) or isinstance(expected, bool):
        return bool(got) == bool(expected) and not (isinstance(got, float) and math.isnan(got))
    try:
        a, b = float(got), float(expected)
    except (TypeError, ValueError):
        return got == expected
    if math.isnan(a) or math.isnan(b):
        return False
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= atol + rtol * abs(b)


DETAIL_LABELS = {"en": ("got", "expected"), "zh": ("得到", "应为")}


def _detail(got: Normal, expected: Normal) -> Text:
    """The got/expected lines under a failed comparison, in both languages."""

    def line(label: str, n: Normal, zh: bool) -> str:
        colon, open_, sep, close = ("：", "（", "，", "）") if zh else (": ", " (", ", ", ")")
        if n.kind == "tensor":
            shape = ("形状 " if zh else "shape ") + fmt_shape(n.shape or ())
            extra = f"{sep}{n.dtype}" if n.dtype else ""
            return f"{label}{colon}tensor {n.text}{open_}{shape}{extra}{close}"
        return f"{label}{colon}{n.text}{open_}{n.type_name}{close}"

    def both(lang: str) -> str:
        zh = lang == "zh"
        got_label, expected_label = DETAIL_LABELS[lang]
        return cap(line(got_label, got, zh) + "\n" + line(expected_label, expected, zh))

    return Text(en=both("en"), zh=both("zh"))


Say = Callable[..., Text]


def _sayer(answer: bool) -> Say:
    """Message lookup: for a typed answer, the ``answer_`` variant of a key where one exists
    (it speaks of "your answer" and does not give the expected value away)."""

    def say(key: str, **values: Any) -> Text:
        if answer and f"answer_{key}" in catalog():
            key = f"answer_{key}"
        return msg(key, **values)

    return say


def _compare_arrays(
    expr: str, got: Normal, expected: Normal, rtol: float, atol: float, say: Say
) -> Comparison:
    detail = _detail(got, expected)
    if got.shape != expected.shape:
        return Comparison(
            False,
            say(
                "shape_mismatch",
                expr=expr,
                got=fmt_shape(got.shape or ()),
                expected=fmt_shape(expected.shape or ()),
            ),
            detail,
        )
    if got.flat is None or expected.flat is None:
        return Comparison(False, say("too_large", expr=expr), detail)
    for i, (a, b) in enumerate(zip(got.flat, expected.flat, strict=True)):
        if not elements_equal(a, b, rtol, atol):
            key = "nan_differs" if _is_nan(a) or _is_nan(b) else "value_differs"
            where = fmt_index(i, expected.shape or ())
            if not expected.shape:
                key = "nan_scalar" if key == "nan_differs" else "scalar_differs"
            return Comparison(
                False,
                say(key, expr=expr, index=where, got=fmt_scalar(a), expected=fmt_scalar(b)),
                detail,
            )
    return Comparison(True, say("value_ok", expr=expr), detail)


def _is_nan(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)


def compare(
    expr: str,
    got: Snapshot | Any,
    expected: Snapshot | Any,
    *,
    rtol: float = 1e-5,
    atol: float = 1e-6,
    check_dtype: bool = False,
    literal: bool = False,
    answer: bool = False,
) -> Comparison:
    """Compare the learner's value of ``expr`` with the truth.

    ``literal`` means the truth was written in the lesson (a number or nested list): then a
    tensor, a list and a number compare by shape and values alone. When the truth is the
    reference solution's value, the learner's value must also be of the same kind.
    ``answer`` words the feedback for a typed answer.
    """
    say = _sayer(answer)
    g, e = normalize(got), normalize(expected)
    detail = _detail(g, e)
    arrays = ("tensor", "sequence", "number")
    if expr.endswith(".grad") and g.kind == "none" and e.kind in arrays:
        return Comparison(False, say("grad_is_none", expr=expr, var=expr[: -len(".grad")]), detail)
    if e.kind == "tensor" and g.kind != "tensor":
        if g.kind == "none":
            return Comparison(False, say("got_none_expected_tensor", expr=expr), detail)
        return Comparison(
            False,
            say("not_a_tensor", expr=expr, got=g.type_name, expected=fmt_shape(e.shape or ())),
            detail,
        )
    if check_dtype and e.dtype and g.dtype != e.dtype:
        return Comparison(
            False, say("dtype_mismatch", expr=expr, got=g.dtype, expected=e.dtype), detail
        )
    if e.kind in arrays and g.kind in arrays:
        if e.kind == "number" and g.kind == "tensor" and not literal:
            return Comparison(False, say("tensor_not_number", expr=expr, expected=e.text), detail)
        if e.kind == "sequence" and g.kind == "tensor" and not literal:
            return Comparison(
                False, say("wrong_type", expr=expr, got="Tensor", expected=e.type_name), detail
            )
        return _compare_arrays(expr, g, e, 0.0 if e.kind == "bool" else rtol, atol, say)
    if e.kind == "bool" and g.kind == "tensor" and literal and g.shape in ((), (1,)) and g.flat:
        ok = g.flat[0] == e.scalar
        key = "value_ok" if ok else "scalar_differs"
        return Comparison(
            ok, say(key, expr=expr, got=fmt_scalar(g.flat[0]), expected=e.text), detail
        )
    if g.kind != e.kind:
        return Comparison(
            False, say("wrong_type", expr=expr, got=g.type_name, expected=e.type_name), detail
        )
    if e.kind in ("bool", "str", "none"):
        ok = g.scalar == e.scalar
        key = "value_ok" if ok else "scalar_differs"
        return Comparison(ok, say(key, expr=expr, got=g.text, expected=e.text), detail)
    # other objects: same type and the same printed form, memory addresses aside
    ok = g.type_name == e.type_name and _ADDRESS.sub("", g.text) == _ADDRESS.sub("", e.text)
    key = "value_ok" if ok else "scalar_differs"
    return Comparison(
        ok, say(key, expr=expr, got=cap(g.text, 80), expected=cap(e.text, 80)), detail
    )

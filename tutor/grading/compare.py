"""Comparing a value from the learner's run with the truth, in the parent process.

Everything from the learner's run is the learner's claim, received as data: a snapshot is
validated here before it counts as a tensor (its exact class, a dtype torch has, values that
fit its shape and dtype), and kinds are compared strictly: a bool, an integer and a float
tensor are different answers, a Python number is not a tensor, and an object claiming to be
a tensor (a subclass, a ``__class__`` property) is not one. Nothing the learner's process did
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
from tutor.i18n import Lang, Text
from tutor.sandbox.models import Snapshot, TensorSnapshot, ValueSnapshot

Kind = Literal["tensor", "sequence", "number", "bool", "none", "str", "other"]
Family = Literal["bool", "int", "float", "complex", "mixed", "empty"]
"""What the elements of a tensor or a list are; two answers of different families differ."""

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
_NON_FINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}

TENSOR_CLASSES = frozenset({"torch.Tensor", "torch.nn.parameter.Parameter"})
"""The exact classes (``type(value)``, as the snapshot names them) that count as tensors."""

DTYPE_FAMILY: dict[str, Family] = {
    "torch.bool": "bool",
    **{f"torch.{name}": "int" for name in (
        "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64")},
    **{f"torch.{name}": "float" for name in (
        "float16", "bfloat16", "float32", "float64", "float8_e4m3fn", "float8_e5m2")},
    **{f"torch.{name}": "complex" for name in ("complex32", "complex64", "complex128")},
}
PYTHON_NUMBER_TYPES = frozenset({
    "int", "float", "float16", "float32", "float64", "int8", "int16", "int32", "int64",
    "uint8", "uint16", "uint32", "uint64",
})
"""Type names whose snapshot value is a number: Python's and numpy's scalars."""
PYTHON_BOOL_TYPES = frozenset({"bool", "bool_"})
SEQUENCE_TYPES = frozenset({"list", "tuple", "Size"})
MALFORMED = "malformed tensor data"


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
    family: Family | None = None

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


def flatten(values: Any) -> tuple[tuple[int, ...], list[Any]] | None:
    """Shape and flat elements of a rectangular nested list; ``None`` if ragged."""
    if not isinstance(values, (list, tuple)):
        return (), [_scalar(values)]
    if not values:
        return (0,), []
    parts = [flatten(v) for v in values]
    if any(p is None for p in parts):
        return None
    shapes = {p[0] for p in parts if p is not None}
    if len(shapes) != 1:
        return None
    flat = [x for p in parts if p is not None for x in p[1]]
    return (len(values), *shapes.pop()), flat




def element_family(value: Any) -> Family | None:
    """The family of one element by its exact type (``True`` is no number here)."""
    if type(value) is bool:
        return "bool"
    if type(value) is int:
        return "int"
    if type(value) is float:
        return "float"
    return None


def family_of(flat: list[Any]) -> Family:
    families = {element_family(x) for x in flat}
    if not families:
        return "empty"
    if families == {"int", "float"}:
        return "float"
    if len(families) == 1 and None not in families:
        return families.pop()  # type: ignore[return-value]
    return "mixed"


def _fits(flat: list[Any], family: Family) -> bool:
    """Whether every element is of the type a tensor of ``family`` gives from ``tolist()``."""
    if family == "complex":
        return all(type(x) is str for x in flat)
    if family == "float":
        return all(type(x) is float for x in flat)
    return all(element_family(x) == family for x in flat)


def _tensor(value: TensorSnapshot) -> Normal:
    """A snapshot that claims to be a tensor, validated: a tensor only if every part fits."""
    shape = tuple(value.shape)
    family = DTYPE_FAMILY.get(value.dtype)
    if value.type not in TENSOR_CLASSES:
        return Normal("other", value.type, text=value.type)
    numel = math.prod(shape) if all(d >= 0 for d in shape) else -1
    if family is None or numel != value.numel:
        return Normal("other", MALFORMED, text=MALFORMED)
    flat = None
    if value.values is not None and not value.truncated:
        flattened = flatten(value.values)
        if flattened is None or flattened[0] != shape or not _fits(flattened[1], family):
            return Normal("other", MALFORMED, text=MALFORMED)
        flat = flattened[1]
    text = fmt_values(value.values) if value.values is not None else "..."
    return Normal("tensor", "Tensor", shape=shape, flat=flat, dtype=value.dtype, text=text,
                  family=family)


def _from_python(value: Any, type_name: str | None = None, text: str = "") -> Normal:
    name = type_name or type(value).__name__
    if value is None and name in ("NoneType", "None"):
        return Normal("none", "None", text="None")
    if type(value) is bool:
        return Normal("bool", name, scalar=value, text=str(value), family="bool")
    if type(value) in (int, float) or (type(value) is str and value in _NON_FINITE):
        number = _scalar(value)
        return Normal(
            "number", name, shape=(), flat=[number], scalar=number, text=fmt_scalar(number),
            family="float" if type(number) is float else "int",
        )
    if type(value) is str:
        return Normal("str", name, scalar=value, text=repr(value))
    if type(value) in (list, tuple):
        flat = flatten(list(value))
        if flat is not None and all(element_family(x) for x in flat[1]):
            return Normal("sequence", name, shape=flat[0], flat=flat[1], text=fmt_values(value),
                          family=family_of(flat[1]))
        return Normal("other", name, scalar=value, text=repr(value))
    return Normal("other", name, text=text or repr(value))


def _value(value: ValueSnapshot) -> Normal:
    """A plain value from a run: its JSON value counts only under the type it belongs to
    (an ``int`` subclass with its own ``__eq__`` is its class, compared by type and repr)."""
    data, name = value.value, value.type
    plain = (
        (name == "NoneType" and data is None)
        or (name in PYTHON_BOOL_TYPES and type(data) is bool)
        or (name in PYTHON_NUMBER_TYPES and type(data) in (int, float, str)
            and (type(data) is not str or data in _NON_FINITE))
        or (name in SEQUENCE_TYPES and type(data) is list)
        or (name in ("str", "dtype", "device") and type(data) is str)
    )
    if not plain:
        return Normal("other", name, text=value.repr)
    if name in PYTHON_BOOL_TYPES:
        name = "bool"
    return _from_python(data, name, value.repr)


def normalize(value: Snapshot | Any) -> Normal:
    """A snapshot from a run, or a literal from a lesson, as a :class:`Normal`."""
    if isinstance(value, TensorSnapshot):
        return _tensor(value)
    if isinstance(value, ValueSnapshot):
        return _value(value)
    return _from_python(value)


def elements_equal(got: Any, expected: Any, rtol: float, atol: float) -> bool:
    """Two elements of the same family: bools by identity of value, numbers within
    tolerance; a bool never equals a number (``True == 1`` is Python's, not ours)."""
    if (type(got) is bool) != (type(expected) is bool):
        return False
    if type(got) is bool:
        return got is expected
    if type(got) not in (int, float) or type(expected) not in (int, float):
        return type(got) is type(expected) and got == expected
    a, b = float(got), float(expected)
    if math.isnan(a) or math.isnan(b):
        return False
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= atol + rtol * abs(b)


FAMILY_LABELS = {
    "bool": Text(en="bool (True/False) values", zh="布尔值（True/False）"),
    "int": Text(en="integers", zh="整数"),
    "float": Text(en="floating-point numbers", zh="浮点数"),
    "complex": Text(en="complex numbers", zh="复数"),
    "mixed": Text(en="values of mixed types", zh="混合类型的值"),
    "empty": Text(en="no values", zh="没有值"),
}


def _holds(n: Normal) -> Text:
    """``torch.bool (bool values)`` for a tensor, the family alone for a list or a number."""
    label = FAMILY_LABELS[n.family or "mixed"]
    if n.kind == "tensor" and n.dtype:
        return Text(en=f"{n.dtype}, {label.en}", zh=f"{n.dtype}，{label.zh}")
    return label


def families_match(g: Normal, e: Normal, *, literal: bool) -> bool:
    """Whether two arrays hold the same kind of elements. Two tensors: the same family
    (bool, integer, float). Against a lesson's literal or a Python number: a bool is never a
    number, and an integer tensor is no answer to floats; an integer literal is also written
    for floats (``[1, 3]``)."""
    gf, ef = g.family or "mixed", e.family or "mixed"
    if gf == ef or "empty" in (gf, ef):
        return True
    if g.kind == "tensor" and e.kind == "tensor" and not literal:
        return False
    if "bool" in (gf, ef) or "mixed" in (gf, ef) or "complex" in (gf, ef):
        return False
    # Python int and float numbers agree, and an int literal stands for floats too
    return not (g.kind == "tensor" and gf == "int" and ef == "float")


def _detail(got: Normal, expected: Normal, reveal: bool = True) -> Text:
    """The got/expected lines under a failed comparison, in both languages; without
    ``reveal`` only what the learner's code gave (summative grading keeps the truth back)."""

    def line(label: str, n: Normal) -> Text:
        if n.kind == "tensor":
            dtype = msg("detail.dtype", dtype=n.dtype) if n.dtype else ""
            return msg("detail.tensor", label=msg(f"detail.{label}"), text=n.text,
                       shape=fmt_shape(n.shape or ()), dtype=dtype)
        return msg("detail.value", label=msg(f"detail.{label}"), text=n.text,
                   type_name=n.type_name)

    lines = [line("got", got)] + ([line("expected", expected)] if reveal else [])

    def both(lang: Lang) -> str:
        return cap("\n".join(text.get(lang) for text in lines))

    return Text(en=both("en"), zh=both("zh"))


Say = Callable[..., Text]


def sayer(answer: bool = False, reveal: bool = True) -> Say:
    """Message lookup: for a typed answer, the ``answer_`` variant of a key where one exists
    (it speaks of "your answer" and does not give the expected value away); without
    ``reveal``, the ``hidden_`` variant, which says what is wrong but not the truth."""

    def say(key: str, **values: Any) -> Text:
        if answer and f"answer_{key}" in catalog():
            key = f"answer_{key}"
        elif not reveal and f"hidden_{key}" in catalog():
            key = f"hidden_{key}"
        return msg(key, **values)

    return say


def _compare_arrays(
    expr: str, got: Normal, expected: Normal, rtol: float, atol: float, say: Say, detail: Text
) -> Comparison:
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
    reveal: bool = True,
) -> Comparison:
    """Compare the learner's value of ``expr`` with the truth.

    ``literal`` means the truth was written in the lesson (a number or nested list): then a
    tensor, a list and a number compare by shape and values alone, bools apart from numbers.
    When the truth is the reference solution's value, the learner's value must also be of
    the same kind, and a tensor of the same dtype family. ``answer`` words the feedback for
    a typed answer; ``reveal=False`` keeps the expected value out of the feedback.
    """
    say = sayer(answer, reveal)
    g, e = normalize(got), normalize(expected)
    detail = _detail(g, e, reveal)
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
    if e.kind in arrays and g.kind in arrays:
        if e.kind == "number" and g.kind == "tensor" and not literal:
            return Comparison(False, say("tensor_not_number", expr=expr, expected=e.text), detail)
        if e.kind == "sequence" and g.kind == "tensor" and not literal:
            return Comparison(
                False, say("wrong_type", expr=expr, got="Tensor", expected=e.type_name), detail
            )
        if not families_match(g, e, literal=literal):
            return Comparison(
                False, say("dtype_differs", expr=expr, got=_holds(g), expected=_holds(e)), detail
            )
        if check_dtype and e.dtype and g.dtype != e.dtype:
            return Comparison(
                False, say("dtype_mismatch", expr=expr, got=g.dtype, expected=e.dtype), detail
            )
        return _compare_arrays(expr, g, e, rtol, atol, say, detail)
    if e.kind == "bool" and g.kind == "tensor" and literal and g.shape in ((), (1,)) and g.flat:
        if g.family != "bool":
            return Comparison(
                False, say("dtype_differs", expr=expr, got=_holds(g), expected=_holds(e)), detail
            )
        ok = g.flat[0] is e.scalar
        key = "value_ok" if ok else "scalar_differs"
        return Comparison(
            ok, say(key, expr=expr, got=fmt_scalar(g.flat[0]), expected=e.text), detail
        )
    if g.kind != e.kind:
        return Comparison(
            False, say("wrong_type", expr=expr, got=g.type_name, expected=e.type_name), detail
        )
    if e.kind in ("bool", "str", "none"):
        ok = g.scalar == e.scalar and type(g.scalar) is type(e.scalar)
        key = "value_ok" if ok else "scalar_differs"
        return Comparison(ok, say(key, expr=expr, got=g.text, expected=e.text), detail)
    # other objects: same type and the same printed form, memory addresses aside
    ok = g.type_name == e.type_name and _ADDRESS.sub("", g.text) == _ADDRESS.sub("", e.text)
    key = "value_ok" if ok else "scalar_differs"
    return Comparison(
        ok, say(key, expr=expr, got=cap(g.text, 80), expected=cap(e.text, 80)), detail
    )

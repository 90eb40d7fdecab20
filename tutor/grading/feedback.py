"""Feedback text: the bilingual message catalog (``messages.yaml``) and value formatting."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from tutor.i18n import Catalog

CATALOG_PATH = Path(__file__).with_name("messages.yaml")
OUTPUT_CAP = 1200
"""Characters of got/expected detail kept in a check's ``output``."""


msg = Catalog(CATALOG_PATH)
"""``msg("key", name=...)``: the message ``key`` with its placeholders filled."""
catalog = msg.texts


def fmt_shape(shape: list[int] | tuple[int, ...]) -> str:
    """As Python prints a tuple: ``()``, ``(2,)``, ``(1, 2)``."""
    dims = tuple(int(d) for d in shape)
    return str(dims)


def fmt_scalar(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        text = f"{value:.6g}"
        if not any(c in text for c in ".einf"):
            text += ".0"
        return text
    return str(value)


def fmt_values(values: Any) -> str:
    """Nested lists of scalars, printed like Python lists (``[1.0, 3.0]``)."""
    if isinstance(values, list):
        return "[" + ", ".join(fmt_values(v) for v in values) + "]"
    return fmt_scalar(values)


def fmt_index(flat_index: int, shape: tuple[int, ...]) -> str:
    """Flat position -> ``[i, j]`` in a tensor of ``shape``."""
    if not shape:
        return "[]"
    index: list[int] = []
    for dim in reversed(shape):
        index.append(flat_index % dim if dim else 0)
        flat_index //= dim if dim else 1
    return "[" + ", ".join(str(i) for i in reversed(index)) + "]"


def cap(text: str, limit: int = OUTPUT_CAP) -> str:
    if len(text) <= limit:
        return text
    return text[: limit - 20] + f"... [{len(text) - limit + 20} more characters]"

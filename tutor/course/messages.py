"""The bilingual lint messages (``lint_messages.yaml``): data, filled in both languages."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from tutor.i18n import Text, load_messages

CATALOG_PATH = Path(__file__).with_name("lint_messages.yaml")


@cache
def catalog() -> dict[str, Text]:
    return load_messages(CATALOG_PATH)


def msg(key: str, **values: Any) -> Text:
    """Message ``key`` with its ``{placeholders}`` filled (see :meth:`Text.format`)."""
    return catalog()[key].format(**values)

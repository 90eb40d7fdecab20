"""The bilingual lint messages (``lint_messages.yaml``): data, filled in both languages."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from tutor.i18n import Text

CATALOG_PATH = Path(__file__).with_name("lint_messages.yaml")


@cache
def catalog() -> dict[str, Text]:
    from ruamel.yaml import YAML

    data = YAML(typ="safe").load(CATALOG_PATH.read_text(encoding="utf-8"))
    return {key: Text(en=value["en"], zh=value["zh"]) for key, value in data.items()}


def msg(key: str, **values: Any) -> Text:
    """Message ``key`` with its ``{placeholders}`` filled; a :class:`Text` value is filled
    with its own language's string."""
    template = catalog()[key]

    def fill(lang: str) -> str:
        here = {k: v.get(lang) if isinstance(v, Text) else v for k, v in values.items()}  # type: ignore[arg-type]
        return template.get(lang).format(**here)  # type: ignore[arg-type]

    return Text(en=fill("en"), zh=fill("zh"))

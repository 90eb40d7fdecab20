"""The TUI's own words: bilingual labels from ``labels.yaml`` (data, not code).

``labels.yaml`` is written in YAML's JSON-compatible flow style (one ``"key": {"en": ...,
"zh": ...}`` a line), so any YAML tool reads it and the first screen reads it with the
``json`` module: the YAML reader and pydantic stay off it (measured with
benchmarks/bench_startup.py, they are a large part of the first screen's budget).
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any

from tutor.i18n import Lang, Text, catalog_entry


@lru_cache(maxsize=1)
def labels() -> dict[str, Text]:
    """Every label, checked: each key must have both ``en`` and ``zh`` (a plain check, not
    pydantic: this runs before the first screen, which pydantic is kept off)."""
    source = resources.files("tutor.tui").joinpath("labels.yaml").read_text(encoding="utf-8")
    return {key: catalog_entry("labels.yaml", key, entry)
            for key, entry in json.loads(source).items()}


def label(key: str, lang: Lang, **values: Any) -> str:
    """The label ``key`` in ``lang``, with ``{name}`` placeholders filled."""
    text = labels()[key].get(lang)
    return text.format(**values) if values else text


def text(key: str) -> Text:
    return labels()[key]

"""Bilingual text: every learner-facing string exists in English and Simplified Chinese."""

from __future__ import annotations

import locale
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from tutor.records import Deferred, Record

Lang = Literal["en", "zh"]
LANGS: tuple[Lang, ...] = ("en", "zh")


@dataclass(frozen=True)
class Text(Record):
    """A string in both languages.

    In YAML a plain string stands for both languages (use it for text that is the same in
    both, such as a formula or a code name); a mapping ``{en: ..., zh: ...}`` gives each.
    """

    en: str
    zh: str

    def get(self, lang: Lang) -> str:
        return self.zh if lang == "zh" else self.en

    def format(self, **values: Any) -> Text:
        """Fill ``{name}`` placeholders in both languages; a :class:`Text` value fills each
        language with its own string."""

        def fill(lang: Lang) -> str:
            here = {k: v.get(lang) if isinstance(v, Text) else v for k, v in values.items()}
            return self.get(lang).format(**here)

        return Text(en=fill("en"), zh=fill("zh"))

    def __add__(self, other: Text) -> Text:
        return Text(en=self.en + other.en, zh=self.zh + other.zh)


def _coerce_text(value: Any) -> Any:
    if isinstance(value, str):
        return {"en": value, "zh": value}
    return value


def _either_form() -> Any:
    from pydantic import BeforeValidator

    return BeforeValidator(_coerce_text, json_schema_input_type=str | Text)


BiText = Annotated[Text, Deferred(_either_form)]
"""A field type that accepts a plain string or an ``{en, zh}`` mapping."""


def T(en: str, zh: str) -> Text:  # short constructor for message tables
    return Text(en=en, zh=zh)


def load_messages(path: Path) -> dict[str, Text]:
    """A message catalog: a YAML file mapping each key to ``{en: ..., zh: ...}``; a key
    without both languages is an error."""
    from pydantic import TypeAdapter  # only where a catalog is read: not on the start-up

    from tutor.yaml_read import read_yaml

    return TypeAdapter(dict[str, Text]).validate_python(read_yaml(path))


def default_lang() -> Lang:
    """The language from the environment: ``TUTOR_LANG``, then the locale; English otherwise."""
    explicit = os.environ.get("TUTOR_LANG", "").strip().lower()
    if explicit in LANGS:
        return explicit  # type: ignore[return-value]
    for var in ("LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE"):
        value = os.environ.get(var, "")
        if value:
            return "zh" if value.lower().startswith("zh") else "en"
    try:
        loc = locale.getlocale()[0] or ""
    except ValueError:
        loc = ""
    return "zh" if loc.lower().startswith("zh") else "en"

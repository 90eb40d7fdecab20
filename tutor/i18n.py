"""Bilingual text: every learner-facing string exists in English and Simplified Chinese.

One way to store a string (ARCHITECTURE.md, "Strings"): words a layer owns live in that
layer's YAML catalog, read through :class:`Catalog`; :func:`T` only where a string is built
in code from parts; :func:`plural` for an English count. A language is picked in one place,
:meth:`Text.get`.
"""

from __future__ import annotations

import locale
import os
import threading
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
    from pydantic import BeforeValidator  # here: pydantic stays off the first screen

    return BeforeValidator(_coerce_text, json_schema_input_type=str | Text)


BiText = Annotated[Text, Deferred(_either_form)]
"""A field type that accepts a plain string or an ``{en, zh}`` mapping."""


def T(en: str, zh: str) -> Text:  # short constructor for message tables
    return Text(en=en, zh=zh)


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """``1 lesson``, ``2 lessons``: English counts (Chinese has no plural: its catalogs
    write ``{n} 个课程``)."""
    return f"{count} {noun if count == 1 else nouns or noun + 's'}"


def counted(count: int, noun: str, nouns: str | None = None) -> Text:
    """A count to fill a catalog's ``{placeholder}``: ``2 lessons`` in English
    (:func:`plural`), the bare number in Chinese, whose entry writes the measure word
    (``{lessons} 个课程``)."""
    return Text(en=plural(count, noun, nouns), zh=str(count))


def load_messages(path: Path) -> dict[str, Text]:
    """A message catalog: a YAML file mapping each key to ``{en: ..., zh: ...}``; a key
    without both languages (or with more) raises ``ValueError`` naming it. A plain check,
    not pydantic: a catalog may be read before the first screen."""
    # Imported here: yaml_read words its own errors with Text, so it imports this module.
    # Through the JSON cache: a shell command's words then cost no YAML parser.
    from tutor.data_cache import read_data

    data = read_data(path)
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a message catalog maps keys to {{en: ..., zh: ...}}")
    return {str(key): catalog_entry(str(path), key, entry) for key, entry in data.items()}


def catalog_entry(catalog: str, key: object, entry: object) -> Text:
    """One entry of a catalog, checked: exactly an ``en`` and a ``zh`` string; else
    ``ValueError`` naming the catalog and the key."""
    if not (isinstance(entry, dict) and entry.keys() == {"en", "zh"}
            and all(isinstance(v, str) for v in entry.values())):
        raise ValueError(f"{catalog}: {key!r} must map to exactly an en and a zh string")
    return Text(en=entry["en"], zh=entry["zh"])


class Catalog:
    """A layer's words: the catalog file at ``path``, read on first use.
    ``catalog("key", name=...)`` is the message with its placeholders filled."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._texts: dict[str, Text] | None = None
        self._lock = threading.Lock()

    def texts(self) -> dict[str, Text]:
        with self._lock:
            if self._texts is None:
                self._texts = load_messages(self.path)
            return self._texts

    def __call__(self, key: str, /, **values: Any) -> Text:
        """Message ``key`` with its ``{placeholders}`` filled (see :meth:`Text.format`)."""
        return self.texts()[key].format(**values)

    def __contains__(self, key: object) -> bool:
        return key in self.texts()


def as_lang(value: object) -> Lang | None:
    """``value`` as a :data:`Lang`, or None when it names none."""
    if value == "en":
        return "en"
    if value == "zh":
        return "zh"
    return None


def env_lang() -> Lang | None:
    """``TUTOR_LANG``, where it names a language."""
    return as_lang(os.environ.get("TUTOR_LANG", "").strip().lower())


def locale_lang() -> Lang:
    """The locale's language: Chinese for a ``zh`` locale, English otherwise."""
    for var in ("LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE"):
        value = os.environ.get(var, "")
        if value:
            return "zh" if value.lower().startswith("zh") else "en"
    try:
        loc = locale.getlocale()[0] or ""
    except ValueError:
        loc = ""
    return "zh" if loc.lower().startswith("zh") else "en"


def default_lang() -> Lang:
    """The language from the environment: ``TUTOR_LANG``, then the locale; English otherwise.
    (A face asks :func:`tutor.settings.choose_lang`, which puts the language saved in the
    app between the two.)"""
    return env_lang() or locale_lang()

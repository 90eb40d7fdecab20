"""One thing said in English and Chinese: a card's answer, its question forms, a pattern list.

A plain generic dataclass (no pydantic), so that ``tutor ask`` can read the answer cards and
the solution-request patterns without importing pydantic; the tests validate the data files
against these shapes with pydantic.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

V = TypeVar("V")


@dataclass(frozen=True)
class Both(Generic[V]):
    en: V
    zh: V

    def get(self, lang: str) -> V:
        return self.zh if lang == "zh" else self.en


Pair = Both[str]
"""A text in both languages."""
Patterns = Both[tuple[str, ...]]
"""Several phrasings (question forms, regular expressions) in each language."""
NONE: Patterns = Both((), ())

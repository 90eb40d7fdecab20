"""Concept cues (``cues.yaml``): one token for many wordings of one idea, added on both sides.

BM25 only meets a question and a lesson on shared words. "My gradients keep getting bigger
every time my loop runs" shares almost none with "gradients add up ... from one iteration to
the next", though both say *a value grows, again and again*. A cue names such an idea; each
match of its patterns adds the token ``~name`` to the text's tokens, at index time and at
question time alike, so wording stops mattering for that idea.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from tutor.chat.concepts import ConceptsError
from tutor.data_cache import read_data

CUES_PATH = Path(__file__).with_name("cues.yaml")
PREFIX = "~"
"""Cue tokens start with a character the tokenizer never emits, so no word collides."""


class Cues(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    cues: dict[str, list[str]]


@lru_cache(maxsize=4)
def _compiled(path: Path = CUES_PATH) -> tuple[tuple[str, re.Pattern[str]], ...]:
    try:
        data = Cues.model_validate(read_data(path))
        return tuple(
            (PREFIX + name, re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE))
            for name, patterns in data.cues.items()
        )
    except (OSError, ValueError, re.error) as exc:
        raise ConceptsError(f"{path}: cannot load the tutor's concept cues: {exc}") from exc


def cue_tokens(text: str, path: Path = CUES_PATH) -> list[str]:
    """``~name`` once per match of each cue in ``text``."""
    return [token for token, pattern in _compiled(path) for _ in pattern.finditer(text)]

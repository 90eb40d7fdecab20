"""Everything the tutor says in its own words, in both languages: ``messages.yaml``, read as
this module's attributes (``messages.OFF_TOPIC`` is a :class:`~tutor.i18n.Text`)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from tutor.i18n import Text, load_messages

PATH = Path(__file__).with_name("messages.yaml")


@lru_cache(maxsize=1)
def catalog() -> dict[str, Text]:
    return load_messages(PATH)


def __getattr__(name: str) -> Text:
    try:
        return catalog()[name]
    except KeyError:
        raise AttributeError(f"tutor/chat/messages.yaml has no message {name!r}") from None

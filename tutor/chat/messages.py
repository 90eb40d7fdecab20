"""Everything the tutor says in its own words, in both languages: ``messages.yaml``, read as
this module's attributes (``messages.OFF_TOPIC`` is a :class:`~tutor.i18n.Text`). Read
without pydantic: `tutor ask` may need one message and nothing else."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from tutor.data_cache import read_data
from tutor.errors import TutorError
from tutor.i18n import Text

PATH = Path(__file__).with_name("messages.yaml")


@lru_cache(maxsize=1)
def catalog() -> dict[str, Text]:
    out: dict[str, Text] = {}
    for name, entry in read_data(PATH).items():
        if not (
            isinstance(entry, dict)
            and set(entry) == {"en", "zh"}
            and all(isinstance(text, str) for text in entry.values())
        ):
            raise TutorError(f"{PATH}: message {name!r} needs an en and a zh text")
        out[str(name)] = Text(en=entry["en"], zh=entry["zh"])
    return out


def __getattr__(name: str) -> Text:
    try:
        return catalog()[name]
    except KeyError:
        raise AttributeError(f"tutor/chat/messages.yaml has no message {name!r}") from None

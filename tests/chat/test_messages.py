"""The tutor's own words (tutor/chat/messages.yaml): every message the code names exists in
both languages with the same placeholders, and every message is used."""

from __future__ import annotations

import re
import string
from pathlib import Path

import pytest

from tutor.chat import messages

CHAT = Path(messages.__file__).parent


def _used() -> set[str]:
    names: set[str] = set()
    for path in CHAT.glob("*.py"):
        text = path.read_text(encoding="utf-8")
        names.update(re.findall(r"\b(?:msg|messages)\.([A-Z][A-Z_]+)\b", text))
    return names


def _fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def test_every_message_named_in_the_code_exists_and_every_message_is_used() -> None:
    known = set(messages.catalog())
    assert _used() - known == set()
    assert known - _used() == set()


def test_both_languages_fill_the_same_placeholders() -> None:
    for name, text in messages.catalog().items():
        assert text.en.strip() and text.zh.strip(), name
        assert _fields(text.en) == _fields(text.zh), name


def test_an_unknown_message_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="NOPE"):
        messages.NOPE  # noqa: B018

"""The CJK character ranges every part of the app shares (``tutor.cjk``)."""

from __future__ import annotations

import re

import pytest

from tutor import cjk

RANGES = ["HAN", "KANA", "HANGUL", "SYMBOLS", "FULLWIDTH", "PUNCTUATION", "BREAKABLE",
          "UNSPACED"]


@pytest.mark.parametrize("name", RANGES)
def test_each_range_is_a_character_class_above_the_first_mark(name: str) -> None:
    ranges = getattr(cjk, name)
    pattern = re.compile(f"[{ranges}]")
    lowest = min(ranges.replace("-", ""))
    assert lowest >= cjk.FIRST_MARK, name  # text below FIRST_MARK can skip every search
    assert pattern.match(lowest)


@pytest.mark.parametrize(("char", "inside", "outside"), [
    ("的", ["HAN", "BREAKABLE", "UNSPACED"], ["PUNCTUATION"]),
    ("，", ["PUNCTUATION", "UNSPACED", "FULLWIDTH"], ["HAN", "BREAKABLE"]),
    ("。", ["PUNCTUATION", "UNSPACED", "SYMBOLS"], ["HAN", "BREAKABLE"]),
    ("Ａ", ["FULLWIDTH", "UNSPACED"], ["PUNCTUATION", "HAN"]),
    ("한", ["HANGUL", "BREAKABLE"], ["UNSPACED"]),  # Korean writes spaces between words
    ("の", ["KANA", "BREAKABLE", "UNSPACED"], ["HAN"]),
    ("a", [], RANGES),
])
def test_what_each_range_holds(char: str, inside: list[str], outside: list[str]) -> None:
    for name in inside:
        assert re.match(f"[{getattr(cjk, name)}]", char), (char, name)
    for name in outside:
        assert not re.match(f"[{getattr(cjk, name)}]", char), (char, name)


def test_the_line_breaking_marks_are_punctuation_not_text() -> None:
    marks = set(cjk.OPENING + cjk.CLOSING)
    assert not marks & set("的aA1 ")
    assert set(cjk.OPENING).isdisjoint(cjk.CLOSING)


def test_han_tells_a_chinese_question() -> None:
    assert cjk.has_han("为什么 x.grad 是 None")
    assert not cjk.has_han("why is x.grad None？")  # a fullwidth mark is not Chinese text

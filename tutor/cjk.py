"""Which characters are Chinese, and its CJK neighbours, for the places that treat them
unlike Latin text: the chat's index (bigrams of Han), line breaking (between any two), and
the spaces Chinese does not write (a YAML line fold or a template leaves stray ones).

Each range is the inside of a regular expression's character class: ``f"[{HAN}]"``.
"""

from __future__ import annotations

import re

HAN = "\u2e80-\u2fff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
"""Han: the radicals, the unified ideographs (with extension A), the compatibility ones."""
KANA = "\u3040-\u31ff"
"""Kana, bopomofo and their neighbours (CJK strokes, kanbun)."""
HANGUL = "\uac00-\ud7af"
SYMBOLS = "\u3000-\u303f"
"""CJK symbols and punctuation: 、。「」《》 and the ideographic space."""
FULLWIDTH = "\uff00-\uffef"
"""Fullwidth and halfwidth forms: ，！？：（） and fullwidth letters and digits."""
PUNCTUATION = SYMBOLS + "\uff00-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65“”‘’…"
"""Chinese punctuation: the fullwidth marks (not letters or digits) and the curly quotes."""
FIRST_MARK = "\u2018"
"""The lowest character of every range here: text below it has none of them."""

BREAKABLE = HAN + KANA + HANGUL
"""A line may break between any two of these."""
UNSPACED = HAN + KANA + SYMBOLS + FULLWIDTH
"""Written without spaces between them: a space between two of these is a stray one."""
OPENING = "（［｛〈《「『【〔〖“‘"
"""Marks that never end a line."""
CLOSING = "，。、；：！？）］｝〉》」』】〕〗”’…·～"
"""Marks that never start a line."""

HAN_RE = re.compile(f"[{HAN}]")


def has_han(text: str) -> bool:
    """Whether ``text`` has a Chinese character (how a question's language is told)."""
    return HAN_RE.search(text) is not None

"""Chinese wraps between characters (Rich and Textual otherwise break at spaces only),
with punctuation kept on the right line and Latin words whole."""

from __future__ import annotations

import itertools
import random
import re

import pytest
from rich.console import Console
from rich.text import Text
from textual.content import Content

from tutor.tui import cjk_wrap

PARAGRAPH = (
    "训练模型，说白了就是不断微调一堆数字（权重），让损失（loss）越来越小。"
    "要知道每个数字该往哪边调，就得知道梯度。不过 autograd 只盯着你让它盯的张量。"
)
WIDTH = 24


def rich_lines(text: str, width: int) -> list[str]:
    return [line.plain for line in Text(text).wrap(Console(width=80), width)]


def textual_lines(text: str, width: int) -> list[str]:
    return [line.plain for line in Content(text).wrap(width)]


@pytest.fixture(autouse=True)
def installed() -> None:
    cjk_wrap.install()


@pytest.mark.parametrize("wrap", [rich_lines, textual_lines], ids=["rich", "textual"])
def test_chinese_fills_lines_and_keeps_punctuation_and_words(wrap) -> None:
    from rich.cells import cell_len

    lines = wrap(PARAGRAPH, WIDTH)
    assert "".join(lines).replace(" ", "") == PARAGRAPH.replace(" ", "")  # nothing lost
    assert all(cell_len(line) <= WIDTH for line in lines)
    for line in lines[1:]:
        assert line[0] not in cjk_wrap.CLOSING, lines
    for line, following in itertools.pairwise(lines):
        assert line.rstrip()[-1] not in cjk_wrap.OPENING, lines
        # No half-empty lines: a line ends only where the next word did not fit.
        next_word = re.match(r"[\w.=()]+|.", following.lstrip()).group()  # type: ignore[union-attr]
        if not next_word.isascii():
            next_word = following.lstrip()[:1]  # one Chinese character
        assert cell_len(line) + cell_len(next_word) > WIDTH, lines
    assert any("（loss）" in line for line in lines)  # a Latin word is never cut
    assert any(line.startswith("autograd 只盯着") for line in lines)


@pytest.mark.parametrize("wrap", [rich_lines, textual_lines], ids=["rich", "textual"])
def test_english_wraps_as_before(wrap) -> None:
    text = "autograd only watches the tensors you ask it to watch: requires_grad=True"
    assert [line.rstrip() for line in wrap(text, 20)] == [
        "autograd only",
        "watches the tensors",
        "you ask it to watch:",
        "requires_grad=True",
    ]


def test_uninstall_restores_the_libraries_own_breaking() -> None:
    cjk_wrap.uninstall()
    assert "只盯着你让它盯的张量。" in rich_lines(PARAGRAPH, WIDTH)  # one unbroken "word"
    cjk_wrap.install()
    cjk_wrap.install()  # twice: still undone by one uninstall
    cjk_wrap.uninstall()
    assert "只盯着你让它盯的张量。" in textual_lines(PARAGRAPH, WIDTH)


def _words(pattern, text: str) -> list[str]:
    """Word by word, as the libraries call their pattern."""
    words, position = [], 0
    while (found := pattern.match(text, position)) is not None and found.end() > position:
        words.append(found.group())
        position = found.end()
    return words


@pytest.mark.parametrize("finder", [cjk_wrap.RICH_WORD, cjk_wrap.TEXTUAL_CHUNK],
                         ids=["rich", "textual"])
def test_the_plain_pattern_stands_in_only_where_it_breaks_the_same(finder) -> None:
    """Text that does not need the CJK-aware pattern gets the same words from the plain
    one: random texts of letters, spaces, marks and ideographs, and every label."""
    from tutor.tui.labels import labels

    alphabet = "ab1 .\n" * 3 + cjk_wrap.OPENING[:3] + cjk_wrap.CLOSING[-6:] + "训练"
    generator = random.Random(7)
    texts = ["".join(generator.choice(alphabet) for _ in range(generator.randint(1, 12)))
             for _ in range(4000)]
    texts += [text.get(lang) for text in labels().values() for lang in ("en", "zh")]
    plain = 0
    for text in texts:
        if not cjk_wrap.needs_cjk_breaks(text):
            plain += 1
            assert _words(finder.plain, text) == _words(finder.pattern, text), text
        assert _words(finder, text) == _words(finder.pattern, text), text
    assert 500 < plain < len(texts) - 500  # both kinds were tried
    assert not cjk_wrap.needs_cjk_breaks("Step 1/6 · Reading")
    assert not cjk_wrap.needs_cjk_breaks("Ask the tutor…")
    assert not cjk_wrap.needs_cjk_breaks("a “quote” b")  # marks at the ends of a word
    assert cjk_wrap.needs_cjk_breaks("x·y") and cjk_wrap.needs_cjk_breaks("said“quote”")

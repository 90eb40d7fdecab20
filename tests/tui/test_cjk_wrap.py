"""Chinese wraps between characters (Rich and Textual otherwise break at spaces only),
with punctuation kept on the right line and Latin words whole."""

from __future__ import annotations

import io
import itertools
import random
import re

import pytest
from rich.cells import cell_len
from rich.console import Console, RenderableType
from rich.text import Text

from tutor.tui import cjk_wrap
from tutor.tui.cjk_wrap import Markdown, Wrapped

PARAGRAPH = (
    "训练模型，说白了就是不断微调一堆数字（权重），让损失（loss）越来越小。"
    "要知道每个数字该往哪边调，就得知道梯度。不过 autograd 只盯着你让它盯的张量。"
)
WIDTH = 24


def printed(renderable: RenderableType, width: int) -> list[str]:
    console = Console(width=width, file=io.StringIO(), color_system=None)
    with console.capture() as capture:
        console.print(renderable)
    return [line.rstrip() for line in capture.get().splitlines()]


def wrapped_lines(text: str, width: int) -> list[str]:
    return printed(Wrapped(text), width)


def markdown_lines(text: str, width: int) -> list[str]:
    return printed(Markdown(text), width)


@pytest.mark.parametrize("wrap", [wrapped_lines, markdown_lines], ids=["text", "markdown"])
def test_chinese_fills_lines_and_keeps_punctuation_and_words(wrap) -> None:
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


def test_rich_alone_breaks_chinese_only_at_spaces() -> None:
    """What this module is for: Rich's own wrapping keeps the phrase whole."""
    assert "只盯着你让它盯的张量。" in printed(Text(PARAGRAPH), WIDTH)
    assert "只盯着你让它盯的张量。" not in wrapped_lines(PARAGRAPH, WIDTH)


@pytest.mark.parametrize("wrap", [wrapped_lines, markdown_lines], ids=["text", "markdown"])
def test_english_wraps_as_rich_wraps_it(wrap) -> None:
    text = "autograd only watches the tensors you ask it to watch: requires_grad=True"
    assert wrap(text, 20) == printed(Text(text), 20) == [
        "autograd only",
        "watches the tensors",
        "you ask it to watch:",
        "requires_grad=True",
    ]


def test_random_texts_fit_lose_nothing_and_keep_marks_with_their_neighbours() -> None:
    """Texts of letters, spaces, marks and ideographs at widths from 2 to 12: every line
    fits, only spaces are dropped at breaks, no break puts a closing mark first or leaves
    an opening mark last except after a space or in a line full of marks, and a word
    that fits a line is never split."""
    marks = cjk_wrap.OPENING + cjk_wrap.CLOSING
    alphabet = "ab1 " * 3 + cjk_wrap.OPENING[:3] + cjk_wrap.CLOSING[-6:] + "训练张量"
    generator = random.Random(7)
    for _ in range(3000):
        text = "".join(generator.choice(alphabet) for _ in range(generator.randint(1, 30)))
        width = generator.randint(2, 12)
        lines = [line.plain for line in cjk_wrap.wrap_lines(Text(text), width)]
        assert all(cell_len(line) <= width for line in lines), (text, width, lines)
        assert "".join(lines).replace(" ", "") == text.replace(" ", ""), (text, width, lines)
        for offset in cjk_wrap.break_offsets(text, width):
            before, after = text[offset - 1], text[offset]
            line = text[: offset].rstrip().rsplit("\n", 1)[-1]
            word = re.search(r"\S*$", text[:offset]).group() + re.match(  # type: ignore[union-attr]
                r"\S*", text[offset:]).group()  # type: ignore[union-attr]
            folded = cell_len(word) > width  # a word wider than a line may break anywhere
            squeezed = folded or not line.strip(marks) or before.isspace()
            assert after not in cjk_wrap.CLOSING or squeezed, (text, width, lines)
            assert before not in cjk_wrap.OPENING or squeezed, (text, width, lines)
        for word in re.findall(r"(?<!\S)[ab1]+(?!\S)", text):  # a word between spaces
            if len(word) <= width:
                assert any(word in line for line in lines), (text, width, lines)


def test_text_without_cjk_breaks_is_left_to_rich() -> None:
    assert not cjk_wrap.needs_cjk_breaks("Step 1/6 · Reading")
    assert not cjk_wrap.needs_cjk_breaks("Ask the tutor…")
    assert not cjk_wrap.needs_cjk_breaks("a “quote” b")  # marks at the ends of a word
    assert cjk_wrap.needs_cjk_breaks("x·y") and cjk_wrap.needs_cjk_breaks("said“quote”")
    text = Text("plain English, styled", style="bold")
    assert next(iter(Wrapped(text).__rich_console__(Console(), Console().options))) is text


def test_measured_from_its_widest_unit_to_its_widest_line() -> None:
    console = Console(width=80)
    measure = Wrapped("张量（tensor）会记录").__rich_measure__(console, console.options)
    assert (measure.minimum, measure.maximum) == (cell_len("（tensor）"), cell_len(
        "张量（tensor）会记录"))

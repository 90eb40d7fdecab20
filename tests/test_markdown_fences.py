"""Fenced code in Markdown, read as CommonMark reads it (``tutor.markdown_fences``)."""

from __future__ import annotations

import pytest

from tutor.markdown_fences import Piece, fenced_pieces

TEXTS = [
    "",
    "no code at all\n\nsecond paragraph",
    "before\n\n```python\nx = 1\n```\n\nafter\n",
    "- item\n\n  ```\n  nested\n  ```\n\n> ~~~\n> quoted\n> ~~~\n",
    "windows\r\n```\r\ncode\r\n```\r\nend",
    "```\nnever closed\n\nstill code",
    "inline ```x``` is no fence\n",
]


@pytest.mark.parametrize("text", TEXTS)
def test_the_pieces_are_the_text(text: str) -> None:
    for nested in (True, False):
        assert "".join(p.source for p in fenced_pieces(text, nested=nested)) == text


def test_prose_and_code_in_order() -> None:
    assert fenced_pieces("before\n\n```python title\nx = 1\n```\n\nafter\n") == [
        Piece("before\n\n"),
        Piece("```python title\nx = 1\n```\n", "x = 1\n", "python"),
        Piece("\nafter\n"),
    ]


def test_tildes_longer_fences_and_unclosed_ones() -> None:
    [tilde] = [p for p in fenced_pieces("~~~\na\n~~~\n") if p.code is not None]
    assert tilde.code == "a\n"
    # a fence closes only with as many marks as it opened with
    [longer] = [p for p in fenced_pieces("````md\n```\ninner\n```\n````\nafter") if p.code]
    assert longer.code == "```\ninner\n```\n" and longer.lang == "md"
    # an unclosed fence runs to the end (a reply still streaming)
    assert fenced_pieces("text\n```\nx = (\n\ny")[-1] == Piece("```\nx = (\n\ny", "x = (\n\ny")


def test_what_is_not_a_fence() -> None:
    for text in ["inline ```x``` is no fence\n", "    ```\n    indented code\n    ```\n",
                 "`` not three ``\n"]:
        assert all(p.code is None for p in fenced_pieces(text)), text


def test_nested_fences_stay_in_their_prose_when_asked() -> None:
    text = "- got:\n\n  ```\n  tensor([1.])\n  ```\n\n```\ntop\n```\n"
    nested = [p.code for p in fenced_pieces(text) if p.code is not None]
    top = [p.code for p in fenced_pieces(text, nested=False) if p.code is not None]
    assert nested == ["tensor([1.])\n", "top\n"]  # the list item's indentation removed
    assert top == ["top\n"]


def test_line_ends_of_every_kind_place_the_pieces() -> None:
    pieces = fenced_pieces("a\r\n```\r\ncode\r\n```\r\nb")
    assert [p.source for p in pieces] == ["a\r\n", "```\r\ncode\r\n```\r\n", "b"]
    assert pieces[1].code == "code\n"

"""Keyboard-only use: keys in typing order, leaving the editor, the quiz by keys alone."""

from __future__ import annotations

from typing import Any

from test_app_pilot import drive, go_to
from textual import events
from textual.pilot import Pilot
from textual.widgets import Input, TextArea

from tutor.tui.app import TutorApp

BURST = [*"abcdef", "backspace", "backspace", "X", "Y", "left", "left", "Z"]
"""What a terminal delivers in one read when a learner fixes a typo and keeps typing."""


async def type_burst(app: TutorApp, pilot: Pilot[Any]) -> None:
    """Queue every key before any is handled, as the terminal driver does (``pilot.press``
    waits after each key, which hid the bug)."""
    for key in BURST:
        app.post_message(events.Key(key, key if len(key) == 1 else None))
    for _ in range(5):
        await pilot.pause()


def test_keys_after_backspace_keep_their_order(make_app) -> None:
    """QA2 #1: ``abcdef`` BSpace BSpace ``XY`` left ``abcdef`` (Textual ran the Input's
    Backspace binding only after the following characters were inserted)."""

    async def scenario(app: TutorApp, pilot: Pilot[Any]) -> None:
        await go_to(app, pilot, "mini-basics", "grad-value")
        answer = app.query_one("#answer-input", Input)
        answer.focus()
        await pilot.pause()
        await type_burst(app, pilot)
        assert answer.value == "abcdZXY"

        await go_to(app, pilot, "mini-basics", "first-backward")
        editor = app.query_one("#editor", TextArea)
        editor.text = ""
        editor.focus()
        await pilot.pause()
        await type_burst(app, pilot)
        assert editor.text == "abcdZXY"

        chat = app.query_one("#chat-input", Input)
        chat.focus()
        await pilot.pause()
        await type_burst(app, pilot)
        assert chat.value == "abcdZXY"

    drive(make_app(), scenario)

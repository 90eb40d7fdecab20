"""The footer: the main keys of the key table in the learner's language, and the command
palette's on the right.

Textual's ``Footer`` lists the screen's active bindings, but builds its keys only after the
bindings next change, which is a frame after the first screen (and again at each change).
This bar is composed with the screen from the key table (tutor.tui.keys), and a key the app
turns off where it means nothing (Cancel while nothing runs, Show answer off quizzes) is
hidden whenever the screen's bindings change. A click does what the key does.
"""

from __future__ import annotations

from typing import Any

from textual import events
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.content import Content
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import Static

from tutor.i18n import Lang
from tutor.tui.keys import KEYS, Key
from tutor.tui.labels import label

PALETTE = Key("ctrl+p", "command_palette", "key_palette", show=True, key_display="^p")


class KeyHint(Static):
    """One key and what it does; a click presses it."""

    DEFAULT_CSS = """
    KeyHint { width: auto; height: 1; margin: 0 1 0 0; }
    KeyHint:hover { background: $block-hover-background; }
    """

    def __init__(self, key: Key, lang: Lang, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.key = key
        self.show_in(lang)

    def show_in(self, lang: Lang) -> None:
        first = self.key.key.split(",")[0]
        self.update(Content.assemble(
            (self.key.key_display or first, "bold $footer-key-foreground"),
            " ",
            (label(self.key.description, lang), "$footer-description-foreground"),
        ))

    def on_click(self, event: events.Click) -> None:
        event.stop()
        self.app.simulate_key(self.key.key.split(",")[0])


class KeyBar(Horizontal):
    DEFAULT_CSS = """
    KeyBar { dock: bottom; height: 1; background: $footer-background; }
    KeyBar #key-palette { dock: right; margin: 0; padding: 0 1 0 0;
                          border-left: vkey $foreground 20%; }
    """

    lang: reactive[Lang] = reactive("en", init=False)

    def __init__(self, lang: Lang = "en", **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.set_reactive(KeyBar.lang, lang)

    def compose(self) -> ComposeResult:
        for key in KEYS:
            if key.show:
                yield KeyHint(key, self.lang, classes="key")
        yield KeyHint(PALETTE, self.lang, id="key-palette")

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self.bindings_changed)
        self.bindings_changed(self.screen)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def bindings_changed(self, screen: Screen[Any]) -> None:
        """Show the keys the app has on now (its ``check_action``)."""
        for hint in self.query(".key").results(KeyHint):
            hint.display = self.app.check_action("keyed", (self.lang, hint.key.action)) is True

    def watch_lang(self) -> None:
        for hint in self.query(KeyHint):
            hint.show_in(self.lang)
        self.bindings_changed(self.screen)

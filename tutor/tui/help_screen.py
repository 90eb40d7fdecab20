"""The help screen: every key binding (the footer shows only the main ones)."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from tutor.i18n import Lang
from tutor.tui.keys import help_rows
from tutor.tui.labels import label


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,f1,q", "dismiss", show=False),
    ]

    def __init__(self, lang: Lang) -> None:
        super().__init__()
        self.lang: Lang = lang

    def compose(self) -> ComposeResult:
        with Vertical(id="help-box"):
            yield Static(f"[b]{label('help_title', self.lang)}[/b]", id="help-title")
            yield Static(label("help_intro", self.lang), id="help-intro", markup=False)
            table: DataTable[str] = DataTable(
                id="help-table", cursor_type="row", zebra_stripes=True
            )
            table.add_columns(label("help_key", self.lang), label("help_action", self.lang))
            for keys, action in help_rows(self.lang):
                table.add_row(keys, action)
            yield table

    def on_mount(self) -> None:
        # Focused, so the arrows and PageDown reach the rows below the fold on a short screen.
        self.query_one("#help-table", DataTable).focus()
        self._fit_table()

    def on_resize(self) -> None:
        self._fit_table()

    def _fit_table(self) -> None:
        """The table scrolls inside the box: the box's border, title, intro and margins take
        7 rows, and the box may use 90% of the screen."""
        room = int(self.size.height * 0.9) - 7
        self.query_one("#help-table", DataTable).styles.max_height = max(room, 3)

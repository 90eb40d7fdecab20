"""Quiz choice widgets whose picked state shows in the glyph, not only in its colour.

Textual draws ``▐X▌`` (lists) and ``▐●▌`` (radio buttons) for picked and unpicked
options alike and tells them apart by colour, which is lost on a monochrome terminal, in a
screen reader's text, or to a colour-blind learner. Imported when a quiz step is first shown
(start-up stays light).
"""

from __future__ import annotations

from rich.segment import Segment
from textual.content import Content
from textual.strip import Strip
from textual.widgets import Checkbox, RadioButton, SelectionList

PICKED_BOX = "✓"
EMPTY_BOX = " "
PICKED_RADIO = "●"
EMPTY_RADIO = "○"


class ChoiceButton(RadioButton):
    """A radio button drawn ``▐●▌`` when picked and ``▐○▌`` when not."""

    def __init__(self, label: Content, value: bool = False) -> None:
        super().__init__(label, value)
        self._mark()

    def watch_value(self) -> None:
        self._mark()
        super().watch_value()

    def _mark(self) -> None:
        self.BUTTON_INNER = PICKED_RADIO if self.value else EMPTY_RADIO  # Textual's glyph


class ChoiceList(SelectionList[int]):
    """A multiple-choice list drawn ``▐✓▌`` for a picked choice and ``▐ ▌`` for the others."""

    def render_line(self, y: int) -> Strip:
        strip = super().render_line(y)
        segments = list(strip)
        inner = Checkbox.BUTTON_INNER  # ToggleButton's, which the list draws too
        if len(segments) < 3 or segments[1].text != inner:
            return strip  # not an option line (past the end)
        index = self.scroll_offset.y + y
        picked = self.get_option_at_index(index).value in self.selected
        button = segments[1]
        segments[1] = Segment(PICKED_BOX if picked else EMPTY_BOX, button.style, button.control)
        return Strip(segments, strip.cell_length)

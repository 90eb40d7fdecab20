"""Changing a label's text on a language switch.

``Button.label`` (and a tab's label) is not a layout reactive: with ``width: auto`` the
widget keeps the width of its old text, so "Run ▶" → "运行 ▶" is cut. Re-measure it."""

from __future__ import annotations

from typing import Any

from textual.widget import Widget


def set_label(widget: Widget, text: str) -> None:
    if str(getattr(widget, "label", "")) != text:
        widget_any: Any = widget
        widget_any.label = text
        widget.refresh(layout=True)

"""The one-line bar at the top: app, lesson, progress, device, fitted to the width."""

from __future__ import annotations

from dataclasses import dataclass

from rich.cells import cell_len, set_cell_size
from textual.reactive import reactive
from textual.widgets import Static

from tutor.i18n import Lang, Text
from tutor.tui.labels import label


@dataclass(frozen=True)
class Standing:
    """Where the learner stands: what the bar says besides the app's name."""

    number: int
    lesson: Text
    done: int
    total: int
    device: str


class TopBar(Static):
    lang: reactive[Lang] = reactive("en", init=False)
    standing: reactive[Standing | None] = reactive(None, init=False)

    def __init__(self, standing: Standing, lang: Lang = "en", **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.set_reactive(TopBar.standing, standing)
        self.set_reactive(TopBar.lang, lang)
        self.update(self._text(None))  # whole until laid out: then fitted to the width

    def watch_lang(self) -> None:
        self._draw()

    def watch_standing(self) -> None:
        self._draw()

    def on_resize(self) -> None:
        self._draw()

    def _draw(self) -> None:
        if self.size.width:
            self.update(self._text(self.content_size.width))

    def _text(self, width: int | None) -> str:
        standing, lang = self.standing, self.lang
        if standing is None:
            return ""
        return topbar_text(
            label("app_title", lang),
            f"{standing.number}. {standing.lesson.get(lang)}",
            [label("lesson_done", lang, done=standing.done, total=standing.total),
             label("device_on", lang, device=standing.device)],
            width=width,
        )


def topbar_text(title: str, lesson: str, rest: list[str], *, width: int | None) -> str:
    """The top bar in ``width`` cells (None: all of it): the progress and the device always
    show; the app's name goes first when it does not fit, then the lesson title is cut
    short (…)."""
    sep = " │ "
    if width is None:
        return sep.join([title, lesson, *rest])
    for parts in ([title, lesson, *rest], [lesson, *rest]):
        text = sep.join(parts)
        if cell_len(text) <= width:
            return text
    room = width - cell_len(sep.join(["", *rest]))
    if room < 4:
        return sep.join(rest)
    return sep.join([set_cell_size(lesson, room - 1).rstrip() + "…", *rest])

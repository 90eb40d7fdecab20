"""The lesson list with progress marks: ✓ all graded steps passed, ◐ some, · none yet."""

from __future__ import annotations

from dataclasses import dataclass

from rich.table import Table
from rich.text import Text
from textual import on
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from tutor.course.models import Course
from tutor.i18n import Lang
from tutor.tui.cjk_wrap import Wrapped


def progress_mark(done: int, total: int) -> str:
    if total and done >= total:
        return "✓"
    return "◐" if done else "·"


class LessonList(OptionList):
    """One option per lesson; picking one posts :class:`LessonList.Picked`."""

    @dataclass
    class Picked(Message):
        lesson_id: str

    lang: reactive[Lang] = reactive("en", init=False)

    def __init__(self, course: Course, progress: dict[str, tuple[int, int]], current: str,
                 lang: Lang = "en", **kwargs: object) -> None:
        """``progress``: (passed, gradable) steps by lesson id; ``current``: the lesson
        highlighted."""
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.course = course
        self._progress = progress
        self._current = current
        self.set_reactive(LessonList.lang, lang)

    def on_mount(self) -> None:
        self._draw()

    def show(self, progress: dict[str, tuple[int, int]], current: str) -> None:
        """The lessons with their (passed, gradable) counts; ``current`` highlighted."""
        if (progress, current) != (self._progress, self._current):
            self._progress, self._current = progress, current
            self._draw()

    def watch_lang(self) -> None:
        self._draw()

    def _draw(self) -> None:
        self.clear_options()
        for number, lesson in enumerate(self.course.lessons, start=1):
            mark = progress_mark(*self._progress.get(lesson.id, (0, 0)))
            self.add_option(
                Option(_prompt(f"{mark} {number:>2}.", lesson.title.get(self.lang)), id=lesson.id)
            )
        ids = [lesson.id for lesson in self.course.lessons]
        self.highlighted = ids.index(self._current)

    @on(OptionList.OptionSelected)
    def _picked(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id and event.option.id != self._current:
            self.post_message(self.Picked(event.option.id))


def _prompt(marker: str, title: str) -> Table:
    """``✓  3. Title`` with a wrapped title indented under itself, not under the mark."""
    grid = Table.grid(padding=(0, 1, 0, 0))
    grid.add_column(no_wrap=True)
    grid.add_column(ratio=1)
    grid.add_row(marker, Wrapped(Text(title)))
    return grid

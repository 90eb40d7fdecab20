"""The lesson list with progress marks: ✓ all graded steps passed, ◐ some, · none yet."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
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
    """One option per lesson; the option id is the lesson id."""

    def show(
        self,
        course: Course,
        progress: dict[str, tuple[int, int]],
        current: str,
        lang: Lang,
    ) -> None:
        self.clear_options()
        for number, lesson in enumerate(course.lessons, start=1):
            done, total = progress.get(lesson.id, (0, 0))
            mark = progress_mark(done, total)
            self.add_option(
                Option(_prompt(f"{mark} {number:>2}.", lesson.title.get(lang)), id=lesson.id)
            )
        index = next(i for i, lesson in enumerate(course.lessons) if lesson.id == current)
        self.highlighted = index


def _prompt(marker: str, title: str) -> Table:
    """``✓  3. Title`` with a wrapped title indented under itself, not under the mark."""
    grid = Table.grid(padding=(0, 1, 0, 0))
    grid.add_column(no_wrap=True)
    grid.add_column(ratio=1)
    grid.add_row(marker, Wrapped(Text(title)))
    return grid

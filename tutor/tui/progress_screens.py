"""Two views over the learner's progress: how far each lesson is (alt+p) and the quiz
questions whose last answer was wrong (alt+r). The rows are plain functions of the session,
so tests check them without a screen; the screens only show them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Generic, TypeVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, OptionList, Static
from textual.widgets.option_list import Option

from tutor.course.models import QuizStep
from tutor.i18n import Lang
from tutor.learning import LearningSession, step_ref
from tutor.tui.labels import label


@dataclass(frozen=True)
class LessonRow:
    number: int
    title: str
    passed: int
    total: int
    attempts: int
    next_step: str | None
    """The title of the first step not passed yet (None: all passed)."""


def progress_rows(session: LearningSession, lang: Lang) -> list[LessonRow]:
    passed = session.store.passed_steps()
    rows = []
    for number, lesson in enumerate(session.course.lessons, start=1):
        done, total = session.lesson_progress(lesson, passed)
        attempts = sum(session.store.attempts(step_ref(lesson, step)) for step in lesson.steps)
        todo = next((step.title.get(lang) for step in lesson.steps
                     if step_ref(lesson, step) not in passed), None)
        rows.append(LessonRow(number, lesson.title.get(lang), done, total, attempts, todo))
    return rows


@dataclass(frozen=True)
class MissedQuiz:
    lesson_id: str
    step_id: str
    title: str
    """'lesson title · step title' in the learner's language."""
    attempts: int


def missed_quizzes(session: LearningSession, lang: Lang) -> list[MissedQuiz]:
    """Quiz questions answered at least once and not (yet) right, in course order."""
    passed = session.store.passed_steps()
    missed = []
    for lesson in session.course.lessons:
        for step in lesson.steps:
            ref = step_ref(lesson, step)
            attempts = session.store.attempts(ref)
            if isinstance(step, QuizStep) and attempts and ref not in passed:
                missed.append(MissedQuiz(lesson.id, step.id,
                                         f"{lesson.title.get(lang)} · {step.title.get(lang)}",
                                         attempts))
    return missed


R = TypeVar("R")


class _Box(ModalScreen[object], Generic[R]):
    """A titled box over rows of the learner's progress."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q", "dismiss", show=False)]
    DEFAULT_CSS = """
    _Box { align: center middle; }
    _Box > Vertical { width: 110; max-width: 95%; height: auto; max-height: 90%;
                      border: round $primary; background: $surface; padding: 0 1; }
    _Box .box-title { text-align: center; }
    _Box .box-intro { color: $text-muted; margin: 0 0 1 0; }
    _Box DataTable, _Box OptionList { height: auto; max-height: 30; }
    """
    TITLE_LABEL: ClassVar[str]
    """The label key of the box's title."""

    def __init__(self, rows: list[R], lang: Lang) -> None:
        super().__init__()
        self.rows, self.lang = rows, lang

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(f"[b]{label(self.TITLE_LABEL, self.lang)}[/b]", classes="box-title")
            yield from self.body(self.lang)

    def body(self, lang: Lang) -> ComposeResult:
        """What the box shows under its title."""
        raise NotImplementedError


def _cut(text: str, cells: int) -> str:
    """``text`` in at most ``cells`` columns (… when cut): the table fits a 80-column box."""
    from rich.cells import cell_len, set_cell_size

    return text if cell_len(text) <= cells else set_cell_size(text, cells - 1) + "…"


class ProgressScreen(_Box[LessonRow]):
    TITLE_LABEL = "progress_title"

    def body(self, lang: Lang) -> ComposeResult:
        table: DataTable[str] = DataTable(id="progress-table", cursor_type="row",
                                          zebra_stripes=True)
        table.add_columns("#", label("progress_lesson", lang), label("progress_done", lang),
                          label("progress_attempts", lang), label("progress_todo", lang))
        for row in self.rows:
            todo = _cut(row.next_step, 30) if row.next_step else label("progress_all_done", lang)
            table.add_row(str(row.number), _cut(row.title, 44), f"{row.passed}/{row.total}",
                          str(row.attempts), todo)
        yield table

    def on_mount(self) -> None:
        self.query_one(DataTable).focus()


class ReviewScreen(_Box[MissedQuiz]):
    """Dismissed with the (lesson id, step id) picked, or None."""

    TITLE_LABEL = "review_title"

    def body(self, lang: Lang) -> ComposeResult:
        if not self.rows:
            yield Static(label("review_none", lang), classes="box-intro", markup=False)
            return
        yield Static(label("review_intro", lang), classes="box-intro", markup=False)
        yield OptionList(
            *[Option(f"{item.title}  ({label('attempts', lang, n=item.attempts)})",
                     id=f"{item.lesson_id}/{item.step_id}") for item in self.rows],
            id="review-list",
        )

    def on_mount(self) -> None:
        for widget in self.query("#review-list"):
            widget.focus()

    @on(OptionList.OptionSelected, "#review-list")
    def _picked(self, event: OptionList.OptionSelected) -> None:
        lesson_id, _, step_id = (event.option.id or "").partition("/")
        self.dismiss((lesson_id, step_id))

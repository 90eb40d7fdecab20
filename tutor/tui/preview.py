"""One step alone, as the app shows it (``tutor preview``): the app's own step pane, and
the step's code read-only beside it when it has some."""

from __future__ import annotations

from typing import Any

from textual.app import App, ComposeResult
from textual.containers import Horizontal
from textual.widgets import Footer

from tutor.course.models import AnswerStep, CodeStep, FixStep, Lesson, Step
from tutor.i18n import Lang
from tutor.tui.labels import label
from tutor.tui.markdown_view import CodeView
from tutor.tui.render import step_kind_label, step_markdown
from tutor.tui.step_pane import StepPane, StepView


def step_code(step: Step, lang: Lang) -> str:
    """The code the app shows beside a step: the starter of a code step, an answer step's
    read-only code; none for reading and quiz steps."""
    if isinstance(step, (CodeStep, FixStep)):
        return step.starter_for(lang)
    if isinstance(step, AnswerStep):
        return step.code
    return ""


def step_renderables(lesson: Lesson, step: Step, lang: Lang) -> list[Any]:
    """The step printed with Rich: a header, its text, its code."""
    from rich.markdown import Markdown
    from rich.rule import Rule
    from rich.syntax import Syntax

    index = lesson.steps.index(step)
    title = (f"{lesson.title.get(lang)} · "
             f"{label('step_of', lang, n=index + 1, total=len(lesson.steps))} · "
             f"{step_kind_label(step, lang)}")
    parts: list[Any] = [Rule(title), Markdown(step_markdown(lesson, step, lang))]
    code = step_code(step, lang)
    if code.strip():
        parts.append(Syntax(code, "python", word_wrap=True))
    return parts


class PreviewApp(App[None]):
    CSS_PATH = "app.tcss"
    CSS = "#step-nav { display: none; }"  # one step: nowhere to go

    def __init__(self, lesson: Lesson, step: Step, lang: Lang) -> None:
        super().__init__()
        self.lesson, self.step, self.lang = lesson, step, lang
        self.bind("ctrl+q,escape", "quit", description=label("key_quit", lang))

    def compose(self) -> ComposeResult:
        with Horizontal(id="body"):
            index = self.lesson.steps.index(self.step)
            yield StepPane(StepView(self.lesson, self.step, index), self.lang, id="lesson-pane")
            code = step_code(self.step, self.lang)
            if code.strip():
                yield CodeView(code, "python")
        yield Footer()

    def on_mount(self) -> None:
        self.title = self.lesson.title.get(self.lang)

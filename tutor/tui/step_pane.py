"""The lesson pane: the current step's text, its quiz choices or answer input, hints, and
step navigation. A view: it shows what the app hands it and reports what is picked."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.markup import escape
from textual.widgets import Button, Input, Static

from tutor.course.models import AnswerStep, Lesson, QuizStep, Step
from tutor.i18n import Lang
from tutor.tui.labels import label
from tutor.tui.markdown_view import LessonBody, MarkdownView
from tutor.tui.ordered_keys import OrderedInput
from tutor.tui.relabel import set_label
from tutor.tui.render import (
    answer_placeholder,
    fit_bits,
    hints_markdown,
    inline_code_parts,
    step_kind_label,
    step_markdown,
)


class StepPane(Vertical):
    """Step header, body (markdown), controls for quiz/answer steps, hints, navigation."""

    def __init__(self, body: str = "", **kwargs: Any) -> None:
        """``body``: the first step's text, composed with the pane rather than mounted
        into it once the screen is up (which cost the first screen a layout and frame)."""
        super().__init__(**kwargs)
        self._first_body = body

    def compose(self) -> ComposeResult:
        yield Static(id="step-header")
        with VerticalScroll(id="step-scroll"):
            yield LessonBody(self._first_body, id="step-body")
            yield Vertical(id="step-controls")
            yield MarkdownView(id="step-hints")
        with Horizontal(id="step-nav"):
            yield Button(id="btn-prev", action="app.prev_step", compact=True)
            yield Button(id="btn-hint", action="app.hint", compact=True)
            yield Button(id="btn-next", action="app.next_step", compact=True, variant="primary")

    async def show(
        self,
        lesson: Lesson,
        step: Step,
        *,
        index: int,
        lang: Lang,
        passed: bool,
        attempts: int,
        hints: list[str],
        keep_choices: bool = False,
        choices: Sequence[int] = (),
        answer: str = "",
    ) -> None:
        """Render the step in ``lang``. ``keep_choices`` keeps what the learner picked or
        typed, and where the text was scrolled to (on a language switch); otherwise a new
        step starts at the top of its text, from ``choices`` or ``answer``, the learner's
        last answer to it."""
        self.show_header(lesson, step, index=index, lang=lang, passed=passed, attempts=attempts)
        await self.query_one("#step-body", LessonBody).show(step_markdown(lesson, step, lang))
        if not keep_choices:  # the pane kept the last step's offset: a text read from its middle
            self.query_one("#step-scroll", VerticalScroll).scroll_home(animate=False)
        await self.show_hints(hints, len(step.hints), lang)
        await self._show_controls(step, lang, keep_choices, choices, answer)
        set_label(self.query_one("#btn-prev", Button), label("btn_prev", lang))
        set_label(self.query_one("#btn-hint", Button), label("btn_hint", lang))
        set_label(self.query_one("#btn-next", Button), label("btn_next", lang))
        self.query_one("#btn-hint", Button).disabled = not step.hints

    def show_header(
        self, lesson: Lesson, step: Step, *, index: int, lang: Lang, passed: bool, attempts: int
    ) -> None:
        """Lesson title, step n/N, kind, passed mark, attempts."""
        bits = [
            label("step_of", lang, n=index + 1, total=len(lesson.steps)),
            step_kind_label(step, lang),
        ]
        if passed:
            bits.append(label("passed_mark", lang))
        if attempts:
            bits.append(label("attempts", lang, n=attempts))
        self._header = (lesson.title.get(lang), bits)
        self._draw_header()

    _header: tuple[str, list[str]] | None = None
    _header_text = ""

    def _draw_header(self) -> None:
        """The header at the header's width: its bits go to the next line whole."""
        if self._header is None:
            return
        title, bits = self._header
        header = self.query_one("#step-header", Static)
        text = f"[b]{escape(title)}[/b]\n" + fit_bits(bits, header.content_size.width)
        if text != self._header_text:  # an update costs a layout pass: only a new text
            self._header_text = text
            header.update(text)

    def on_resize(self) -> None:
        self._draw_header()
        self._fit_answer_hint()

    def _fit_answer_hint(self) -> None:
        """The answer's form under the input only when the input cuts its placeholder."""
        from rich.cells import cell_len

        for hint in self.query("#answer-hint").results(Static):
            for answer in self.query("#answer-input").results(Input):
                room = answer.content_size.width
                hint.display = room > 0 and cell_len(answer.placeholder) >= room

    async def show_hints(self, hints: list[str], total: int, lang: Lang) -> None:
        widget = self.query_one("#step-hints", MarkdownView)
        widget.display = bool(hints)
        await widget.show(hints_markdown(hints, total, lang) if hints else "")

    async def _show_controls(self, step: Step, lang: Lang, keep: bool, choices: Sequence[int],
                             answer: str) -> None:
        controls = self.query_one("#step-controls", Vertical)
        previous_choice = self.selected_choices() if keep else list(choices)
        previous_answer = self.typed_answer() if keep else answer
        await controls.remove_children()
        controls.display = isinstance(step, (QuizStep, AnswerStep))
        if isinstance(step, QuizStep):
            from textual.widgets import RadioSet

            from tutor.tui.quiz_choices import ChoiceButton, ChoiceList

            choices = [
                _inline(f"{i}. {choice.text.get(lang)}") for i, choice in enumerate(step.choices, 1)
            ]
            if step.multiple:
                widget: ChoiceList | RadioSet = ChoiceList(
                    *[(text, i, i in previous_choice) for i, text in enumerate(choices)],
                    id="quiz-choices",
                )
            else:
                widget = RadioSet(
                    *[
                        ChoiceButton(text, value=i in previous_choice)
                        for i, text in enumerate(choices)
                    ],
                    id="quiz-choices",
                )
            await controls.mount(widget)
            await controls.mount(
                Button(label("btn_check", lang), id="btn-check", action="app.check", compact=True)
            )
        elif isinstance(step, AnswerStep):
            answer = OrderedInput(
                value=previous_answer,
                placeholder=answer_placeholder(step, lang),
                id="answer-input",
                compact=True,
            )
            row = Horizontal(
                answer,
                Button(label("btn_check", lang), id="btn-check", action="app.check", compact=True),
                id="answer-row",
            )
            # The placeholder again, wrapped: a narrow input cuts it at its edge.
            hint = Static(answer_placeholder(step, lang), id="answer-hint", markup=False)
            hint.display = False  # shown once laid out, if the input is too narrow for it
            await controls.mount(row, hint)
            self.call_after_refresh(self._fit_answer_hint)

    def selected_choices(self) -> list[int]:
        """Indices of the picked choices (empty when none, or not a quiz)."""
        for widget in self.query("#quiz-choices"):  # built (and imported) on quiz steps only
            from textual.widgets import RadioSet, SelectionList

            if isinstance(widget, SelectionList):
                return sorted(int(i) for i in widget.selected)
            if isinstance(widget, RadioSet):
                index = widget.pressed_index
                return [index] if index >= 0 else []
        return []

    def typed_answer(self) -> str:
        for widget in self.query("#answer-input"):
            if isinstance(widget, Input):
                return widget.value
        return ""


def _inline(text: str) -> Content:
    """A quiz choice with its `code` spans drawn as code, not as backticks."""
    return Content.assemble(
        *[(part, "bold $accent") if code else part for part, code in inline_code_parts(text)]
    )

"""The lesson pane: the current step's text, its quiz choices or answer input, hints, and
step navigation. A view: it shows the :class:`StepView` it is given, in its language, and
posts what the learner answers."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from rich.cells import cell_len
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.markup import escape
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Button, Input, Static

from tutor.course.models import AnswerStep, Lesson, QuizStep, Step
from tutor.i18n import Lang, Text
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


@dataclass(frozen=True)
class StepView:
    """What the pane shows of a step: where it is, how the learner did, the hints unlocked
    and the learner's last answer (quiz picks or typed value)."""

    lesson: Lesson
    step: Step
    index: int
    passed: bool = False
    attempts: int = 0
    hints: tuple[Text, ...] = ()
    choices: tuple[int, ...] = ()
    answer: str = ""


class StepPane(Vertical):
    """Step header, body (markdown), controls for quiz/answer steps, hints, navigation."""

    @dataclass
    class AnswerTyped(Message):
        """Enter in the answer box."""

        answer: str

    lang: reactive[Lang] = reactive("en", init=False)

    def __init__(self, view: StepView, lang: Lang = "en", *, focus: bool = False,
                 **kwargs: Any) -> None:
        """``view``: the first step, composed with the pane rather than mounted into it
        once the screen is up (which costs the first screen another layout and frame);
        ``focus``: its answer controls (or Next) take the focus once mounted."""
        super().__init__(**kwargs)
        self.view = view
        self._focus = focus
        self.set_reactive(StepPane.lang, lang)
        self._header_text = ""

    def compose(self) -> ComposeResult:
        yield Static(self._header(0), id="step-header")  # one line until laid out
        with VerticalScroll(id="step-scroll"):
            yield LessonBody(step_markdown(self.view.lesson, self.view.step, self.lang),
                             id="step-body")
            yield Vertical(id="step-controls")
            yield MarkdownView(id="step-hints")
        with Horizontal(id="step-nav"):
            lang = self.lang
            yield Button(label("btn_prev", lang), id="btn-prev", action="app.prev_step",
                         compact=True)
            yield Button(label("btn_hint", lang), id="btn-hint", action="app.hint",
                         compact=True, disabled=not self.view.step.hints)
            yield Button(label("btn_next", lang), id="btn-next", action="app.next_step",
                         compact=True, variant="primary")

    async def on_mount(self) -> None:
        await self._draw(keep=False)
        if self._focus:
            self.focus_answer()

    async def show(self, view: StepView) -> None:
        """Show a step: a new one starts at the top of its text, with the learner's last
        answer; the same step again (after an attempt) keeps what is picked or typed."""
        same = view.lesson.id == self.view.lesson.id and view.step.id == self.view.step.id
        self.view = view
        if same:  # after an attempt: its standing; the controls stay as the learner left them
            self._draw_header()
            await self._draw_hints()
            self._show_give_up()
        else:
            await self._draw(keep=False)

    async def show_hints(self, hints: tuple[Text, ...]) -> None:
        self.view = replace(self.view, hints=hints)
        await self._draw_hints()
        # The newest hint is the last thing in the pane: scroll to the end once the grown
        # box is laid out (scroll_visible showed the box's top, i.e. the first hint).
        self.call_after_refresh(self.query_one("#step-scroll").scroll_end, animate=False)

    async def watch_lang(self) -> None:
        await self._draw(keep=True)  # the reader keeps their place and their answer

    async def _draw(self, *, keep: bool) -> None:
        view, lang = self.view, self.lang
        self._draw_header()
        await self.query_one("#step-body", LessonBody).show(
            step_markdown(view.lesson, view.step, lang))
        if not keep:  # the pane kept the last step's offset: a text read from its middle
            self.query_one("#step-scroll", VerticalScroll).scroll_home(animate=False)
        await self._draw_hints()
        await self._draw_controls(keep)
        for name in ("prev", "hint", "next"):
            set_label(self.query_one(f"#btn-{name}", Button), label(f"btn_{name}", lang))
        self.query_one("#btn-hint", Button).disabled = not view.step.hints

    def _draw_header(self) -> None:
        header = self.query_one("#step-header", Static)
        text = self._header(header.content_size.width)
        if text != self._header_text:  # an update costs a layout pass: only a new text
            self._header_text = text
            header.update(text)

    def _header(self, width: int) -> str:
        """Lesson title, then step n/N, kind, passed mark, attempts, in ``width`` cells
        (0: one line): its bits go to the next line whole."""
        view, lang = self.view, self.lang
        bits = [
            label("step_of", lang, n=view.index + 1, total=len(view.lesson.steps)),
            step_kind_label(view.step, lang),
        ]
        if view.passed:
            bits.append(label("passed_mark", lang))
        if view.attempts:
            bits.append(label("attempts", lang, n=view.attempts))
        return f"[b]{escape(view.lesson.title.get(lang))}[/b]\n" + fit_bits(bits, width)

    def on_resize(self) -> None:
        self._draw_header()
        self._fit_answer_hint()

    def _fit_answer_hint(self) -> None:
        """The answer's form under the input only when the input cuts its placeholder."""
        for hint in self.query("#answer-hint").results(Static):
            for answer in self.query("#answer-input").results(Input):
                room = answer.content_size.width
                hint.display = room > 0 and cell_len(answer.placeholder) >= room

    async def _draw_hints(self) -> None:
        view, lang = self.view, self.lang
        widget = self.query_one("#step-hints", MarkdownView)
        widget.display = bool(view.hints)
        widget.set_markdown(hints_markdown([hint.get(lang) for hint in view.hints],
                                           len(view.step.hints), lang))

    async def _draw_controls(self, keep: bool) -> None:
        step, lang = self.view.step, self.lang
        controls = self.query_one("#step-controls", Vertical)
        picked = self.selected_choices() if keep else list(self.view.choices)
        typed = self.typed_answer() if keep else self.view.answer
        await controls.remove_children()
        controls.display = isinstance(step, (QuizStep, AnswerStep))
        if isinstance(step, QuizStep):
            await controls.mount(_choices(step, lang, picked), Horizontal(
                Button(label("btn_check", lang), id="btn-check", action="app.check",
                       compact=True),
                Button(label("key_give_up", lang), id="btn-give-up", action="app.give_up",
                       compact=True),
                id="quiz-row",
            ))
            self._show_give_up()
        elif isinstance(step, AnswerStep):
            box = OrderedInput(value=typed, placeholder=answer_placeholder(step, lang),
                               id="answer-input", compact=True)
            row = Horizontal(
                box,
                Button(label("btn_check", lang), id="btn-check", action="app.check",
                       compact=True),
                id="answer-row",
            )
            # The placeholder again, wrapped: a narrow input cuts it at its edge.
            hint = Static(answer_placeholder(step, lang), id="answer-hint", markup=False)
            hint.display = False  # shown once laid out, if the input is too narrow for it
            await controls.mount(row, hint)
            self.call_after_refresh(self._fit_answer_hint)

    def _show_give_up(self) -> None:
        """Show answer, on a quiz not passed yet."""
        for button in self.query("#btn-give-up"):
            button.display = not self.view.passed

    @on(Input.Submitted, "#answer-input")
    def _answer_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.post_message(self.AnswerTyped(event.value.strip()))

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
        for widget in self.query("#answer-input").results(Input):
            return widget.value
        return ""

    def focus_answer(self) -> None:
        """Focus where the learner answers (the choices, the answer box), else Next."""
        for widget in self.query("#quiz-choices, #answer-input"):
            widget.focus()
            return
        self.query_one("#btn-next", Button).focus()


def _choices(step: QuizStep, lang: Lang, picked: list[int]) -> Any:
    """Radio buttons for one answer, a selection list for several, ``picked`` picked."""
    from textual.widgets import RadioSet

    from tutor.tui.quiz_choices import ChoiceButton, ChoiceList

    texts = [_inline(f"{i}. {choice.text.get(lang)}") for i, choice in enumerate(step.choices, 1)]
    if step.multiple:
        return ChoiceList(*[(text, i, i in picked) for i, text in enumerate(texts)],
                          id="quiz-choices")
    return RadioSet(*[ChoiceButton(text, value=i in picked) for i, text in enumerate(texts)],
                    id="quiz-choices")


def _inline(text: str) -> Content:
    """A quiz choice with its `code` spans drawn as code, not as backticks."""
    return Content.assemble(
        *[(part, "bold $accent") if code else part for part, code in inline_code_parts(text)]
    )

"""The Textual app: one screen to read a lesson, write code, run it, see the verdict, the
diagnosis and the autograd graph, and ask the tutor.

A thin face: every action calls one :class:`~tutor.learning.LearningSession` method; runs
happen in worker threads so the UI never freezes. Nothing here imports torch.
"""

from __future__ import annotations

import gc
import threading
import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any, ClassVar, cast

from textual import on, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import BindingsMap
from textual.containers import Horizontal, Vertical
from textual.reactive import reactive
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Button, Input, OptionList, Select, Static

from tutor.course.models import AnswerStep, Course, QuizStep, ReadingStep, Step
from tutor.errors import TutorError
from tutor.i18n import Lang
from tutor.learning import (
    RUNNABLE_KINDS,
    Attempt,
    Diagnose,
    GradingLike,
    GraphView,
    LearningSession,
    ProgressLike,
    assigned_names,
)
from tutor.tui import cjk_wrap
from tutor.tui.commands import TutorCommands
from tutor.tui.compact_footer import CompactFooter
from tutor.tui.device_notice import device_notice, surely_missing
from tutor.tui.keys import bindings
from tutor.tui.labels import label, labels
from tutor.tui.lesson_list import LessonList
from tutor.tui.markdown_view import CodeView, MarkdownView, warm_up_highlighting
from tutor.tui.messages import (
    DevicesKnown,
    GraphReady,
    HighlightingReady,
    OutputArrived,
    RunFinished,
    TutorAnswered,
    WorkFailed,
)
from tutor.tui.render import step_markdown
from tutor.tui.result_tabs import ResultTabs, first_tab, tabs_for
from tutor.tui.step_pane import StepPane
from tutor.tui.streaming import StreamingRunner
from tutor.tui.top_bar import TopBar, topbar_text

if TYPE_CHECKING:  # imported when a step first shows code: TextArea loads tree-sitter
    from collections.abc import Iterable

    from textual.widgets import TextArea

    from tutor.sandbox.runner import Runner
    from tutor.settings import SettingsStore
    from tutor.tui.code_area import CodeArea

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
SAVE_DELAY_S = 0.8
"""Edits are saved to the progress store this long after typing stops."""


def set_editor_text(editor: TextArea, text: str) -> None:
    """Replace the editor's text as one edit on the same document: assigning ``.text``
    builds a new syntax-aware document and recompiles the highlight query (slow), and
    clearing the history keeps undo from crossing into another step's code."""
    if editor.text == text:
        return
    editor.replace(text, (0, 0), editor.document.end, maintain_selection_offset=False)
    editor.history.clear()
    editor.move_cursor((0, 0))


def _breakpoint(dimension: int, breakpoints: list[tuple[int, str]]) -> list[str]:
    """The class of the largest breakpoint not above ``dimension`` (Textual's rule)."""
    for threshold, name in sorted(breakpoints, reverse=True):
        if dimension >= threshold:
            return [name]
    return []


def _shows_code(step: Step) -> bool:
    """Code steps show the editor; an answer step shows its code read-only, if it has any."""
    return isinstance(step, RUNNABLE_KINDS) or (
        isinstance(step, AnswerStep) and bool(step.code.strip())
    )


def _best_device(devices: list[str]) -> str:
    for prefix in ("cuda", "mps"):
        for device in devices:
            if device.startswith(prefix):
                return device
    return "cpu"


class TutorApp(App[None]):
    CSS_PATH = "app.tcss"
    TITLE = "autograd tutor"
    COMMANDS = App.COMMANDS | {TutorCommands}
    HORIZONTAL_BREAKPOINTS: ClassVar[list[tuple[int, str]]] = [(0, "-narrow"), (110, "-wide")]
    VERTICAL_BREAKPOINTS: ClassVar[list[tuple[int, str]]] = [(0, "-short"), (36, "-tall")]

    running: reactive[bool] = reactive(False)

    def __init__(
        self,
        session: LearningSession,
        *,
        wanted_device: str = "cpu",
        settings: SettingsStore | None = None,
    ) -> None:
        super().__init__()
        cjk_wrap.install()  # Chinese breaks between characters, not only at spaces
        self.session = session
        self.wanted_device = wanted_device
        self.settings = settings
        self.device_problem: str | None = None
        """The device asked for that runs cannot use (shown on screen until another is
        picked), or None."""
        if wanted_device not in ("auto", "cpu") and surely_missing(wanted_device):
            self.device_problem = wanted_device  # known at once: said on the first screen
        saved_theme = settings.current.theme if settings is not None else None
        if saved_theme and saved_theme in self.available_themes:
            self.theme = saved_theme
        self.graph_view: GraphView | None = None
        self._cancel: threading.Event | None = None
        self._run_started = 0.0
        self._spinner: Timer | None = None
        self._save_timer: Timer | None = None
        self._loading_editor = False
        self._base_bindings: BindingsMap | None = None
        self._first_frame_done = False
        self.offered_devices: list[str] | None = None
        """The devices the picker offers, once the runner has said (None until then: cpu)."""
        self._apply_bindings()

    # ------------------------------------------------------------------ layout

    def get_default_screen(self) -> Screen[Any]:
        """The screen with its size classes (``-narrow``, ``-short``...) already set: set on
        the first resize instead, they restyle every widget after the first layout."""
        width, height = self.size
        classes = {
            name
            for dimension, breakpoints in (
                (width, self.HORIZONTAL_BREAKPOINTS or []),
                (height, self.VERTICAL_BREAKPOINTS or []),
            )
            for name in _breakpoint(dimension, breakpoints)
        }
        return Screen(id="_default", classes=" ".join(sorted(classes)))

    def compose(self) -> ComposeResult:
        yield TopBar(id="topbar", markup=False)
        notice = Static(self._notice_text(), id="notice", markup=False)
        notice.display = self.device_problem is not None
        yield notice
        with Horizontal(id="body"):
            yield LessonList(id="lessons")
            session, step = self.session, self.session.step
            yield StepPane(step_markdown(session.lesson, step, self.lang), id="lesson-pane")
            with Vertical(id="work-pane"):  # the code area goes above the results
                if _shows_code(step):  # composed, not mounted: see _ensure_code_area
                    yield self._new_code_area()
                yield ResultTabs(id="results", shown=tabs_for(step), active=first_tab(step),
                                 lang=self.lang, chat=self._chat_intro())
        yield CompactFooter()

    def code_area(self) -> CodeArea | None:
        """The editor and run bar, once a step with code has been shown."""
        # Looked up by id: the module (and the editor's) is imported when first needed.
        found = next(iter(self.query("#code-area")), None)
        return cast("CodeArea | None", found)

    def editor(self) -> TextArea | None:
        area = self.code_area()
        return area.editor if area is not None else None

    def _new_code_area(self) -> CodeArea:
        from tutor.tui.code_area import CodeArea

        session = self.session
        return CodeArea(
            devices=session.known_devices or ["cpu"],
            device=session.device,
            dark=self.current_theme.dark,
            highlight=self._first_frame_done,
            id="code-area",
        )

    async def _ensure_code_area(self) -> CodeArea:
        """The code area, mounted the first time a step shows code. When the first screen
        shows code it is composed with the screen instead: mounting it from ``on_mount`` is
        awaited, and Textual lays out and draws the screen once more while it waits."""
        area = self.code_area()
        if area is None:
            area = self._new_code_area()
            await self.query_one("#work-pane").mount(area, before=0)
            area.relabel(self.lang)
            session = self.session
            if session.known_devices:  # they may have arrived while it was being mounted
                self._offer_devices(session.known_devices)
                self.select_device(session.device, remember=False)
        return area

    async def on_mount(self) -> None:
        await self.render_all(new_step=True)
        # Asking for the devices starts the torch server: after the first frame, so its
        # import does not compete with drawing the first screen.
        self.call_after_refresh(self._first_frame_drawn)

    def _first_frame_drawn(self) -> None:
        self._first_frame_done = True
        area = self.code_area()
        if area is not None:
            area.highlight()
        if not gc.isenabled():
            # ``tutor`` starts with the garbage collector off (its passes over the freshly
            # imported modules cost ~0.2 s of start-up); freeze what start-up built so later
            # passes skip it, and collect normally from here on.
            gc.freeze()
            gc.enable()
        self.ask_devices()
        self._warm_up_highlighting()

    @work(thread=True, group="warm-up", exit_on_error=False)
    def _warm_up_highlighting(self) -> None:
        warm_up_highlighting()
        self.post_message(HighlightingReady())

    @on(HighlightingReady)
    def _redraw_code(self) -> None:
        for view in self.query(MarkdownView).results(MarkdownView):
            view.redraw_code()
        for code in self.query(CodeView).results(CodeView):
            code.redraw_code()

    # ------------------------------------------------------------------ language & bindings

    def _apply_bindings(self) -> None:
        """Key bindings in the session's language (the footer shows their descriptions)."""
        if self._base_bindings is None:  # Textual's own (incl. the palette key) come first
            self._base_bindings = self._bindings
        base = self._base_bindings
        merged = BindingsMap()
        palette = label("key_palette", self.session.lang)
        merged.key_to_bindings = {
            key: [
                replace(b, description=palette) if b.action == "command_palette" else b
                for b in found
            ]
            for key, found in base.key_to_bindings.items()
        }
        ours = BindingsMap(bindings(self.session.lang))
        merged.key_to_bindings.update(ours.key_to_bindings)
        self._bindings = merged

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel_run":
            return self.running  # shown in the footer only while a run is in flight
        return True

    async def action_toggle_lang(self) -> None:
        self.flush_code()  # edits typed just now are the learner's code, kept as they are
        self.session.toggle_lang()
        self._remember(lang=self.session.lang)
        self._apply_bindings()
        self.refresh_bindings()
        await self.render_all(new_step=False)
        self.notify(label("lang_set", self.session.lang), timeout=2)

    async def set_lang(self, lang: Lang) -> None:
        if lang != self.session.lang:
            await self.action_toggle_lang()

    # ------------------------------------------------------------------ rendering

    @property
    def lang(self) -> Lang:
        return self.session.lang

    async def render_all(self, *, new_step: bool) -> None:
        """Re-render every learner-facing text; ``new_step`` also reloads the editor."""
        lang = self.lang
        area = self.code_area()
        if area is not None:
            area.relabel(lang)
        results = self.query_one(ResultTabs)
        results.relabel(lang)
        self.render_lessons()
        await self.render_step(keep_choices=not new_step)
        if new_step:
            # Focus the answer box or choices as soon as they exist: keys typed while the
            # code area is still being set up must not land on the previous step's widget.
            self._focus_step()
            self.graph_view = None
            await self._layout_step()
            await self.load_editor()
            self._focus_step()
        else:
            editor = self.editor()
            # An untouched starter, or an answer step's read-only code, follows the language.
            if editor is not None and (editor.read_only or self.session.is_starter(editor.text)):
                await self.load_editor()
        keep = not new_step  # a language switch keeps what 'did you mean' works from
        await results.show_attempt(self.session.last_attempt, lang,
                                   typed=results.typed_answer if keep else "",
                                   code=results.code if keep else "")
        results.show_graph(self.graph_view, lang)
        self._render_chat_intro(clear=new_step)
        self.render_topbar()
        self._render_notice()

    async def _layout_step(self) -> None:
        """Show what the step needs: code steps the editor and run bar, an answer step its
        code (read-only), reading and quiz steps no code at all (the text gets the room);
        the result tabs that mean something for the step."""
        step = self.session.step
        shows_code = _shows_code(step)
        self._shows_code = shows_code
        self._edits_code = isinstance(step, RUNNABLE_KINDS)
        self._size_panes()
        area = await self._ensure_code_area() if shows_code else self.code_area()
        if area is not None:
            area.display = shows_code
            area.set_buttons(runnable=isinstance(step, RUNNABLE_KINDS), running=self.running)
        self.query_one(ResultTabs).show_tabs(tabs_for(step), prefer=first_tab(step))

    _shows_code = False
    _edits_code = False

    def _size_panes(self) -> None:
        """Text and work panes share the width: the text gets more on reading and quiz steps;
        with code the editor does, most on a wide screen when the code is edited (the
        lesson list takes 30 columns there, and course lines run to 60+ characters)."""
        if not self._shows_code:
            text, work = 6, 4
        else:
            wide = self._edits_code and self.screen.size.width >= 110
            text, work = (4, 8) if wide else (4, 6)
        text = max(1, text + self.text_share)  # alt+left / alt+right
        widths = (f"{text}fr", f"{work}fr")
        # Set on the few widgets concerned (a class on the screen would restyle them all).
        self.query_one("#lesson-pane").styles.width = widths[0]
        self.query_one("#work-pane").styles.width = widths[1]

    def _focus_step(self) -> None:
        """Focus where the learner acts on this step."""
        step = self.session.step
        editor = self.editor()
        if isinstance(step, RUNNABLE_KINDS) and editor is not None:
            editor.focus()
        elif isinstance(step, (QuizStep, AnswerStep)):
            target = "#quiz-choices" if isinstance(step, QuizStep) else "#answer-input"
            for widget in self.query(target):
                widget.focus()
        else:
            self.query_one("#btn-next", Button).focus()

    def render_topbar(self) -> None:
        session = self.session
        done = sum(session.lesson_progress(lesson)[0] for lesson in session.course.lessons)
        total = sum(session.lesson_progress(lesson)[1] for lesson in session.course.lessons)
        number = session.course.lessons.index(session.lesson) + 1
        colon = "：" if self.lang == "zh" else ": "
        self.query_one("#topbar", TopBar).update(
            topbar_text(
                label("app_title", self.lang),
                f"{number}. {session.lesson.title.get(self.lang)}",
                [
                    label("lesson_done", self.lang, done=done, total=total),
                    f"{label('device_label', self.lang)}{colon}{session.device}",
                ],
                width=self.screen.size.width - 2,  # the bar's padding
            )
        )

    @on(TopBar.WidthChanged)
    def _fit_to_width(self) -> None:
        """The bar spans the screen: it is resized once the screen has its new size (the
        App's own resize event comes before)."""
        self.render_topbar()
        self._size_panes()

    def render_lessons(self) -> None:
        session = self.session
        passed = session.store.passed_steps()
        progress = {
            lesson.id: session.lesson_progress(lesson, passed) for lesson in session.course.lessons
        }
        self.query_one(LessonList).show(session.course, progress, session.lesson.id, self.lang)

    async def render_step(self, *, keep_choices: bool = False) -> None:
        session = self.session
        await self.query_one(StepPane).show(
            session.lesson,
            session.step,
            index=session.step_index,
            lang=self.lang,
            passed=session.step_passed(session.lesson, session.step),
            attempts=session.attempts(),
            hints=[hint.get(self.lang) for hint in session.visible_hints()],
            keep_choices=keep_choices,
            choices=session.previous_choices(),
            answer=session.previous_answer(),
        )

    def render_step_header(self) -> None:
        session = self.session
        self.query_one(StepPane).show_header(
            session.lesson,
            session.step,
            index=session.step_index,
            lang=self.lang,
            passed=session.step_passed(session.lesson, session.step),
            attempts=session.attempts(),
        )

    async def load_editor(self) -> None:
        """Put the step's code in the editor: the learner's last code, else the starter;
        an answer step's code read-only. Steps without code leave the (hidden) editor be."""
        session, editor = self.session, self.editor()
        step = session.step
        if editor is not None and isinstance(step, (*RUNNABLE_KINDS, AnswerStep)):
            self._loading_editor = True
            if isinstance(step, AnswerStep):
                editor.read_only = True
                editor.soft_wrap = True  # read, not edited: wrapped rather than cut
                set_editor_text(editor, step.code)
            else:
                editor.read_only = False
                editor.soft_wrap = False
                set_editor_text(editor, session.code())
            self._loading_editor = False
        self.query_one(ResultTabs).set_graph_choices(assigned_names(self._graph_code()))

    def _graph_code(self) -> str:
        step, editor = self.session.step, self.editor()
        if isinstance(step, AnswerStep):
            return step.code
        if isinstance(step, RUNNABLE_KINDS) and editor is not None:
            return editor.text
        return ""

    def _chat_intro(self) -> list[tuple[str, str, list[str]]]:
        """The chat of a new step: the tutor's welcome (or why there is no tutor)."""
        key = "chat_welcome" if self.session.tutor is not None else "chat_unavailable"
        return [(label("chat_tutor", self.lang), label(key, self.lang), [])]

    def _render_chat_intro(self, *, clear: bool) -> None:
        results = self.query_one(ResultTabs)
        results.set_chat_enabled(self.session.tutor is not None)
        # Only the welcome so far: it follows the language (a conversation stays as it was).
        if clear or len(results.chat) <= 1:
            results.reset_chat(self._chat_intro())

    # ------------------------------------------------------------------ editing

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        if event.text_area.id != "editor":
            return
        if self._loading_editor or event.text_area.read_only:
            return
        if self._save_timer is not None:
            self._save_timer.stop()
        self._save_timer = self.set_timer(SAVE_DELAY_S, self.flush_code)

    def flush_code(self) -> None:
        """Save the editor's code for the current step if it changed."""
        if self._save_timer is not None:
            self._save_timer.stop()
            self._save_timer = None
        editor = self.editor()
        if editor is None:
            return  # no code step shown yet, or shutting down (action_quit saved the edit)
        if editor.read_only or not isinstance(self.session.step, RUNNABLE_KINDS):
            return
        if editor.text != self.session.code():
            self.session.save_code(editor.text)
        self.query_one(ResultTabs).set_graph_choices(assigned_names(editor.text))

    def action_reset_code(self) -> None:
        if not isinstance(self.session.step, RUNNABLE_KINDS):
            self.notify(label("not_runnable", self.lang), severity="warning")
            return
        starter = self.session.reset_code()
        editor = self.editor()
        if editor is None:
            return
        self._loading_editor = True
        # One edit kept in the editor's history: ctrl+z brings the learner's code back.
        editor.replace(starter, (0, 0), editor.document.end, maintain_selection_offset=False)
        self._loading_editor = False
        self.notify(label("code_reset", self.lang), timeout=4)

    # ------------------------------------------------------------------ navigation

    async def open_lesson(self, lesson_id: str) -> None:
        self.flush_code()
        self.session.open_lesson(lesson_id)
        await self.render_all(new_step=True)

    async def action_next_step(self) -> None:
        self.flush_code()
        if self.session.next_step() is None:
            self.notify(label("end_of_course", self.lang))
            return
        await self.render_all(new_step=True)

    async def action_prev_step(self) -> None:
        self.flush_code()
        if self.session.prev_step() is None:
            self.notify(label("start_of_course", self.lang))
            return
        await self.render_all(new_step=True)

    @on(OptionList.OptionSelected, "#lessons")
    async def _lesson_picked(self, event: OptionList.OptionSelected) -> None:
        lesson_id = event.option.id
        if lesson_id and lesson_id != self.session.lesson.id:
            await self.open_lesson(lesson_id)

    def action_toggle_lessons(self) -> None:
        self.screen.toggle_class("-lessons-toggled")
        lessons = self.query_one(LessonList)
        if lessons.display:
            lessons.focus()

    # ------------------------------------------------------------------ hints

    async def action_hint(self) -> None:
        step = self.session.step
        hint = self.session.reveal_hint()
        if hint is None:
            key = "no_hints" if not step.hints else "no_more_hints"
            self.notify(label(key, self.lang), timeout=3)
            return
        visible = [h.get(self.lang) for h in self.session.visible_hints()]
        pane = self.query_one(StepPane)
        await pane.show_hints(visible, len(step.hints), self.lang)
        # The newest hint is the last thing in the lesson pane: scroll to the end once the
        # grown box is laid out (scroll_visible showed the box's top, i.e. the first hint).
        scroll = pane.query_one("#step-scroll")
        self.call_after_refresh(scroll.scroll_end, animate=False)

    # ------------------------------------------------------------------ running

    def action_run(self) -> None:
        step = self.session.step
        if isinstance(step, (QuizStep, AnswerStep)):
            self.action_check()
            return
        if isinstance(step, ReadingStep):
            self.notify(label("not_runnable", self.lang), timeout=3)
            return
        if self.running:
            self.notify(label("already_running", self.lang), severity="warning")
            return
        self.flush_code()
        code = self._graph_code()  # the editor's text
        self._start_running()
        runner = self.session.runner
        if isinstance(runner, StreamingRunner):  # the learner's own run shows as it goes
            runner.listen(code, self._output_arrived)
        self._run_worker(code, self._cancel_event())

    def _output_arrived(self, chunk: str) -> None:
        """From the runner's thread: a chunk of what the learner's run printed."""
        self.post_message(OutputArrived(chunk))

    @on(OutputArrived)
    def _show_output_chunk(self, message: OutputArrived) -> None:
        if self.running:  # (a chunk that comes after the result has nothing to add)
            self.query_one(ResultTabs).add_live_output(message.chunk)

    def _stop_streaming(self) -> None:
        runner = self.session.runner
        if isinstance(runner, StreamingRunner):
            runner.stop_listening()

    def action_check(self) -> None:
        """Submit the quiz choice or the typed answer of the current step."""
        step, pane = self.session.step, self.query_one(StepPane)
        if isinstance(step, QuizStep):
            selected = pane.selected_choices()
            if not selected:
                self.notify(label("quiz_nothing_selected", self.lang), severity="warning")
                return
            attempt = self.session.answer_quiz(selected)
            self.call_later(self._show_attempt, attempt, self.session.ref)
        elif isinstance(step, AnswerStep):
            typed = pane.typed_answer().strip()
            if not typed:
                self.notify(label("answer_empty", self.lang), severity="warning")
                return
            if self.running:
                self.notify(label("already_running", self.lang), severity="warning")
                return
            self._start_running()
            self._answer_worker(typed, self._cancel_event())
        else:
            self.action_run()

    @on(Input.Submitted, "#answer-input")
    def _answer_submitted(self) -> None:
        self.action_check()

    def _cancel_event(self) -> threading.Event:
        self._cancel = threading.Event()
        return self._cancel

    def action_cancel_run(self) -> None:
        if not self.running or self._cancel is None:
            self.notify(label("nothing_to_cancel", self.lang), timeout=2)
            return
        self._cancel.set()
        self.notify(label("cancelled", self.lang), timeout=2)

    def _start_running(self) -> None:
        self.running = True
        self._run_started = time.monotonic()

    def watch_running(self, running: bool) -> None:
        runnable = isinstance(self.session.step, RUNNABLE_KINDS)
        area = self.code_area()
        # (The footer may read ``running`` first while the area is still being composed.)
        if area is not None and area.query("#btn-run"):
            area.set_buttons(runnable=runnable, running=running)
        if running:
            self._tick()
            self._spinner = self.set_interval(0.1, self._tick)
        else:
            if self._spinner is not None:
                self._spinner.stop()
                self._spinner = None
            for status in self.query("#run-status").results(Static):
                status.update("")
        self.refresh_bindings()

    def _tick(self) -> None:
        elapsed = time.monotonic() - self._run_started
        frame = SPINNER[int(elapsed * 10) % len(SPINNER)]
        text = label("running", self.lang, device=self.session.device)
        for status in self.query("#run-status").results(Static):
            status.update(f"{frame} {text} {elapsed:.1f}s")

    # One run at a time (``running`` guards the keys); the workers report by message.

    @work(thread=True, exclusive=True, group="run", exit_on_error=False)
    def _run_worker(self, code: str, cancel: threading.Event) -> None:
        ref = self.session.ref
        try:
            attempt = self.session.run(code, cancel=cancel)
        except TutorError as exc:
            self.post_message(WorkFailed(str(exc)))
            return
        except Exception as exc:  # never let a bug in a lower layer kill the UI
            self.post_message(WorkFailed(label("internal_error", self.lang, error=exc)))
            return
        self.post_message(RunFinished(attempt, ref))

    @work(thread=True, exclusive=True, group="run", exit_on_error=False)
    def _answer_worker(self, typed: str, cancel: threading.Event) -> None:
        ref = self.session.ref
        try:
            attempt = self.session.answer_value(typed, cancel=cancel)
        except Exception as exc:
            self.post_message(WorkFailed(label("internal_error", self.lang, error=exc)))
            return
        self.post_message(RunFinished(attempt, ref))

    @on(WorkFailed)
    def _work_failed(self, message: WorkFailed) -> None:
        if message.ends_run:
            self._run_failed(message.message)
        else:
            self.notify(message.message, severity=message.severity, timeout=8)  # type: ignore[arg-type]

    @on(RunFinished)
    async def _run_finished(self, message: RunFinished) -> None:
        await self._show_attempt(message.attempt, message.ref)

    def _run_failed(self, message: str) -> None:
        self.running = False
        self._stop_streaming()
        self.notify(message, severity="error", timeout=8)

    async def _show_attempt(self, attempt: Attempt, ref: str) -> None:
        """Show a finished attempt; pick the tab that matters most for it."""
        self.running = False
        self._stop_streaming()
        self.render_lessons()
        self.render_topbar()
        if ref != self.session.ref:
            return  # the learner moved on while it ran; the progress marks are updated
        results = self.query_one(ResultTabs)
        typed = self.session.previous_answer() if isinstance(self.session.step, AnswerStep) else ""
        await results.show_attempt(attempt, self.lang, typed=typed, code=self._graph_code())
        self.render_step_header()
        verdict = attempt.verdict
        if attempt.cancelled or (
            verdict.run is not None and not verdict.run.ok and not (attempt.diagnoses)
        ):
            results.show_result("output")
        elif attempt.diagnoses and not verdict.passed:
            results.show_result("diagnosis")
            from tutor.tui.root_cause import show_root_cause  # the cursor on the root cause

            show_root_cause(self.editor(), attempt.diagnoses)
        else:
            results.show_result("verdict")

    # ------------------------------------------------------------------ graph

    def action_draw_graph(self) -> None:
        results = self.query_one(ResultTabs)
        if "graph" not in results.shown_tabs:
            self.notify(label("not_runnable", self.lang), timeout=3)
            return
        results.active = "tab-graph"
        expr = results.graph_expr()
        if not expr:
            self.notify(label("graph_help", self.lang), timeout=3)
            return
        if self.running:
            self.notify(label("already_running", self.lang), severity="warning")
            return
        self._start_running()
        self._graph_worker(self._graph_code(), expr, self._cancel_event())

    @work(thread=True, exclusive=True, group="run", exit_on_error=False)
    def _graph_worker(self, code: str, expr: str, cancel: threading.Event) -> None:
        try:
            view = self.session.graph_of(code, expr, cancel=cancel)
        except Exception as exc:
            self.post_message(WorkFailed(label("internal_error", self.lang, error=exc)))
            return
        self.post_message(GraphReady(view))

    @on(GraphReady)
    def _graph_ready(self, message: GraphReady) -> None:
        self._show_graph(message.view)

    def _show_graph(self, view: GraphView) -> None:
        self.running = False
        self.graph_view = view
        results = self.query_one(ResultTabs)
        results.show_graph(view, self.lang)
        results.show_result("graph")

    # ------------------------------------------------------------------ devices

    @work(thread=True, exclusive=True, group="devices", exit_on_error=False)
    def ask_devices(self) -> None:
        """Ask the runner which devices exist (slow while torch warms up): off the UI thread."""
        try:
            devices = self.session.available_devices()
        except Exception as exc:
            self.post_message(WorkFailed(label("internal_error", self.lang, error=exc),
                                         ends_run=False, severity="warning"))
            return
        self.post_message(DevicesKnown(devices))

    @on(DevicesKnown)
    def _devices_arrived(self, message: DevicesKnown) -> None:
        self._devices_known(message.devices)

    def _device_pickers(self) -> list[Select[str]]:
        """The run bar's device picker, once mounted: one still being mounted cannot take
        new options yet, and :meth:`_ensure_code_area` brings it up to date after."""
        return [select for select in self.query("#device").results(Select) if select.is_mounted]

    def _offer_devices(self, devices: list[str]) -> None:
        for select in self._device_pickers():
            with select.prevent(Select.Changed):  # only the learner's picks are changes
                select.set_options([(device, device) for device in devices])

    def _devices_known(self, devices: list[str]) -> None:
        self._offer_devices(devices)
        wanted = self.wanted_device
        if wanted == "auto":
            wanted = _best_device(devices)
        elif wanted not in devices and f"{wanted}:0" in devices:
            wanted = f"{wanted}:0"
        if wanted not in devices:
            self.device_problem = wanted  # said on screen until the learner picks one
            wanted = "cpu"
        self.select_device(wanted, remember=False)
        self.offered_devices = list(devices)
        self._render_notice()

    def select_device(self, device: str, *, remember: bool = True) -> None:
        """Run on ``device``; ``remember``: the learner picked it, so the next start does."""
        try:
            self.session.set_device(device)
        except TutorError as exc:
            self.notify(str(exc), severity="error")
            return
        if remember:
            self.device_problem = None
            self._remember(device=device)
            self._render_notice()
        for select in self._device_pickers():
            if select.value != device:
                with select.prevent(Select.Changed):
                    select.value = device
        self.render_topbar()

    @on(Select.Changed, "#device")
    def _device_changed(self, event: Select.Changed) -> None:
        if event.value != event.select.value:
            return  # stale: a later programmatic change already replaced this value
        if isinstance(event.value, str) and event.value != self.session.device:
            self.select_device(event.value)
            self.notify(label("device_set", self.lang, device=event.value), timeout=2)

    def action_cycle_device(self) -> None:
        devices = self.session.known_devices or ["cpu"]
        index = devices.index(self.session.device) if self.session.device in devices else -1
        device = devices[(index + 1) % len(devices)]
        self.select_device(device)
        self.notify(label("device_set", self.lang, device=device), timeout=2)

    # ------------------------------------------------------------------ chat

    async def action_focus_chat(self) -> None:
        results = self.query_one(ResultTabs)
        await results.activate("tab-chat")
        results.query_one("#chat-input", Input).focus()

    @on(Input.Submitted, "#chat-input")
    def _chat_submitted(self, event: Input.Submitted) -> None:
        question = event.value.strip()
        if not question:
            return
        event.input.value = ""
        if self.session.tutor is None:
            self.notify(label("chat_unavailable", self.lang), severity="warning")
            return
        self.query_one(ResultTabs).add_chat(label("chat_you", self.lang), question)
        self._chat_worker(question, self._graph_code())

    @work(thread=True, group="chat", exit_on_error=False)
    def _chat_worker(self, question: str, code: str) -> None:
        try:
            answer = self.session.ask(question, code=code)
        except Exception as exc:
            self.post_message(WorkFailed(label("internal_error", self.lang, error=exc),
                                         ends_run=False))
            return
        self.post_message(TutorAnswered(answer))

    @on(TutorAnswered)
    def _tutor_answered(self, message: TutorAnswered) -> None:
        self._show_answer(message.answer)

    def _show_answer(self, answer: Any) -> None:
        text = str(getattr(answer, "text", answer))
        notice = getattr(answer, "fallback_notice", None)
        if notice:
            text = f"{text}\n\n*{notice}*"
        # Titles in the learner's language; the ids (``catalog:...``) mean nothing to them.
        sources_for = getattr(answer, "sources_for", None)
        sources = sources_for(self.lang) if callable(sources_for) else []
        self.query_one(ResultTabs).add_chat(label("chat_tutor", self.lang), text, sources=sources)

    # ------------------------------------------------------------------ clipboard, help

    def action_copy_output(self) -> None:
        from tutor.tui.render import output_plain

        attempt = self.session.last_attempt
        self._copy(output_plain(attempt.run if attempt else None, self.lang))

    def action_copy_diagnosis(self) -> None:
        from tutor.tui.render import diagnosis_markdown

        attempt = self.session.last_attempt
        self._copy(diagnosis_markdown(attempt, self.lang) if attempt else "")

    def _copy(self, text: str) -> None:
        if not text.strip():
            self.notify(label("nothing_to_copy", self.lang), timeout=2)
            return
        self.copy_to_clipboard(text)
        self.notify(label("copied", self.lang), timeout=2)

    def action_help(self) -> None:
        from tutor.tui.help_screen import HelpScreen  # a DataTable: not at start-up

        self.push_screen(HelpScreen(self.lang))

    def watch_theme(self, theme: str) -> None:
        """The editor follows the app theme: a light syntax theme on light app themes."""
        if getattr(self, "settings", None) is not None:  # (set in __init__ after super's)
            self._remember(theme=theme)
        try:
            editor = self.editor()
        except Exception:
            return  # not composed yet
        if editor is not None:
            from tutor.tui.code_area import editor_theme

            editor.theme = editor_theme(self.current_theme.dark)

    # ------------------------------------------------------------------ settings, notice

    def _remember(self, **changes: str | None) -> None:
        if self.settings is not None:
            self.settings.update(**changes)

    def _notice_text(self) -> str:
        problem = self.device_problem
        if problem is None:
            return ""
        return device_notice(problem, self.session.device, self.session.known_devices or [],
                             self.lang)

    def _render_notice(self) -> None:
        for notice in self.query("#notice").results(Static):
            notice.display = self.device_problem is not None
            notice.update(self._notice_text())

    # ------------------------------------------------------------------ result tabs, panes

    def action_show_tab(self, name: str) -> None:
        """Show one result tab (alt+o, v, d, g, t); one the step has not is said, not shown."""
        results = self.query_one(ResultTabs)
        if name not in results.shown_tabs:
            self.notify(label("tab_not_here", self.lang, tab=label(f"tab_{name}", self.lang)),
                        timeout=2)
            return
        results.show_result(name)

    text_share: reactive[int] = reactive(0)
    """How many steps the learner widened (+) or narrowed (-) the text pane."""

    def action_resize_text(self, delta: int) -> None:
        self.text_share = max(-3, min(3, self.text_share + delta))
        self._size_panes()

    # ------------------------------------------------------------------ own editor, progress

    def action_open_in_editor(self) -> None:
        """The code in $VISUAL/$EDITOR (the app steps aside while it runs); what the learner
        saved comes back into the editor as one edit, undoable."""
        import subprocess

        from tutor.tui.external_editor import edit_text, editor_command

        editor = self.editor()
        if editor is None or not isinstance(self.session.step, RUNNABLE_KINDS):
            self.notify(label("editor_no_code", self.lang), severity="warning")
            return
        command = editor_command()
        if command is None:
            self.notify(label("editor_none", self.lang), severity="warning", timeout=6)
            return
        self.flush_code()
        from textual.app import SuspendNotSupported

        def edit() -> str:
            return edit_text(editor.text, command, stem=self.session.step.id.replace("-", "_"))

        try:
            try:
                with self.suspend():
                    text = edit()
            except SuspendNotSupported:  # headless (tests): nothing to step aside from
                text = edit()
        except (OSError, subprocess.CalledProcessError) as exc:
            self.notify(label("editor_failed", self.lang, error=exc), severity="error")
            return
        if text != editor.text:
            editor.replace(text, (0, 0), editor.document.end, maintain_selection_offset=False)
            self.flush_code()
        self.notify(label("editor_back", self.lang, editor=command[0]), timeout=3)

    def action_show_progress(self) -> None:
        from tutor.tui.progress_screens import ProgressScreen, progress_rows

        self.flush_code()
        self.push_screen(ProgressScreen(progress_rows(self.session, self.lang), self.lang))

    def action_review_quizzes(self) -> None:
        from tutor.tui.progress_screens import ReviewScreen, missed_quizzes

        self.flush_code()
        self.push_screen(ReviewScreen(missed_quizzes(self.session, self.lang), self.lang),
                         self._review_picked)

    async def _review_picked(self, picked: object) -> None:
        if isinstance(picked, tuple) and len(picked) == 2:
            self.session.goto(*picked)
            await self.render_all(new_step=True)

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """Textual's own palette entries (theme, quit, keys, screenshot...) in the learner's
        language."""
        for command in super().get_system_commands(screen):
            key = f"palette_sys_{command.title.lower()}"
            if key in labels():
                yield SystemCommand(label(key, self.lang),
                                    label(f"{key}_help", self.lang), command.callback,
                                    command.discover)
            else:
                yield command

    async def action_quit(self) -> None:
        self.flush_code()
        if self._cancel is not None:
            self._cancel.set()  # a run in flight is killed, not left behind
        self.exit()


def create_app(
    *,
    course: Course,
    runner: Runner,
    store: ProgressLike,
    tutor: Any = None,
    lang: Lang = "en",
    device: str = "cpu",
    grading: GradingLike | None = None,
    diagnose: Diagnose | None = None,
    settings: SettingsStore | None = None,
    learner: str | None = None,
) -> TutorApp:
    """Build the app over a session. ``device`` is what the learner asked for (``auto``,
    ``cpu``, ``cuda``...): runs use cpu until the runner has said which devices exist.
    ``learner``: whose order quiz choices are shown in (None: the lesson's order)."""
    session = LearningSession(
        course,
        StreamingRunner(runner),
        store,
        tutor=tutor,
        lang=lang,
        device="cpu",
        grading=grading,
        diagnose=diagnose,
        learner=learner,
    )
    return TutorApp(session, wanted_device=device, settings=settings)

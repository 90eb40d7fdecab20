"""The Textual app: one screen to read a lesson, write code, run it, see the verdict, the
diagnosis and the autograd graph, and ask the tutor.

A thin face: every action calls one :class:`~tutor.learning.LearningSession` method and
hands the result to :class:`~tutor.tui.main_screen.MainScreen`, which shows it. Runs,
answers, graphs, questions and the device list go to exclusive thread workers, so the UI
never freezes; they post typed messages back, and one ``Worker.StateChanged`` handler says
when they fail and whether a run is in flight. Nothing here imports torch.
"""

from __future__ import annotations

import gc
from typing import TYPE_CHECKING, Any

from textual import on, work
from textual.app import App, SystemCommand
from textual.notifications import SeverityLevel
from textual.reactive import reactive
from textual.screen import Screen
from textual.timer import Timer
from textual.worker import Worker, WorkerState, get_current_worker

from tutor.course.models import AnswerStep, QuizStep, ReadingStep, Step
from tutor.errors import TutorError
from tutor.i18n import Lang
from tutor.learning import (
    RUNNABLE_KINDS,
    GraphView,
    LearningSession,
    assigned_names,
)
from tutor.tui.commands import TutorCommands
from tutor.tui.device_notice import DeviceProblem, surely_missing
from tutor.tui.keys import bindings
from tutor.tui.labels import label, labels
from tutor.tui.lesson_list import LessonList
from tutor.tui.main_screen import MainScreen, size_classes
from tutor.tui.markdown_view import warm_up_highlighting
from tutor.tui.messages import (
    Attempted,
    DevicesKnown,
    GraphReady,
    HighlightingReady,
    OutputArrived,
    TutorAnswered,
)
from tutor.tui.result_tabs import ChatEntry, ResultTabs
from tutor.tui.step_pane import StepPane

if TYPE_CHECKING:  # the editor's modules load when a step first shows code
    from collections.abc import Callable, Iterable

    from textual.widgets import TextArea

    from tutor.settings import SettingsStore
    from tutor.tui.code_area import CodeArea

SAVE_DELAY_S = 0.8
"""Edits are saved to the progress store this long after typing stops."""


def best_device(devices: list[str]) -> str:
    for prefix in ("cuda", "mps"):
        for device in devices:
            if device.startswith(prefix):
                return device
    return "cpu"


def failure_text(error: BaseException | None, lang: Lang) -> str:
    """What the learner reads when a worker fails: a TutorError says what to do; anything
    else is a bug in the tutor, said so."""
    if isinstance(error, TutorError):
        return str(error)
    return label("internal_error", lang, error=error)


class TutorApp(App[None]):
    CSS_PATH = "app.tcss"
    TITLE = "autograd tutor"
    COMMANDS = App.COMMANDS | {TutorCommands}
    BINDINGS = bindings()  # type: ignore[assignment]

    lang: reactive[Lang] = reactive("en", init=False)

    def __init__(
        self,
        session: LearningSession,
        *,
        wanted_device: str = "cpu",
        settings: SettingsStore | None = None,
    ) -> None:
        super().__init__()
        self.session = session
        self.wanted_device = wanted_device
        self.settings = settings
        self.set_reactive(TutorApp.lang, session.lang)
        self._main: MainScreen | None = None  # (watch_theme: none to restyle yet)
        saved_theme = settings.current.theme if settings is not None else None
        if saved_theme and saved_theme in self.available_themes:
            self.theme = saved_theme
        self.graph_view: GraphView | None = None
        self.offered_devices: list[str] | None = None
        """The devices the picker offers, once the runner has said (None until then: cpu)."""
        self._save_timer: Timer | None = None
        problem = None
        if wanted_device not in ("auto", "cpu") and surely_missing(wanted_device):
            problem = DeviceProblem(wanted_device, session.device)  # said on the first screen
        self._main = MainScreen(session, device_problem=problem, dark=self.current_theme.dark)

    def get_default_screen(self) -> MainScreen:
        # Textual gives a screen its breakpoint classes on the first resize, after the first
        # layout, and every widget is styled again then: the screen starts with them.
        self.main.add_class(*size_classes(*self.size))
        return self.main

    @property
    def main(self) -> MainScreen:
        assert self._main is not None, "built in __init__"
        return self._main

    @property
    def running(self) -> bool:
        """A run, answer or graph is in flight: its worker has not finished, or what it
        posted is not shown yet (the screen hears of the end after the result)."""
        return self.main.running or self._run_worker_busy()

    def _run_worker_busy(self) -> bool:
        return any(worker.group == "run" and not worker.is_finished for worker in self.workers)

    @on(MainScreen.Drawn)
    def _first_screen_drawn(self) -> None:
        if not gc.isenabled():
            # ``tutor`` starts with the garbage collector off (see tutor.cli.app_cmd):
            # what start-up built is frozen, so later collections skip it.
            gc.freeze()
            gc.enable()
        area = self.main.code_area
        if area is not None:  # on the first screen, drawn plain: its syntax tree now
            area.highlight()
        # Asking for the devices starts the torch server: after the first screen, so its
        # imports do not compete with drawing it.
        self.ask_devices()
        self._warm_up_highlighting()

    # ------------------------------------------------------------------ keys, language

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Keys are bound once per language (see tutor.tui.keys): only the learner's run
        and show in the footer. Cancel shows while a run is in flight, the answer on quiz
        steps not passed yet."""
        if action != "keyed":
            return True
        lang, inner = parameters
        if lang != self.lang:
            return False
        if inner == "cancel_run":
            return self.running
        if inner == "give_up":
            session = self.session
            return isinstance(session.step, QuizStep) and not session.step_passed(
                session.lesson, session.step)
        return True

    async def action_keyed(self, lang: str, action: str) -> None:
        await self.main.shown.wait()  # a key typed ahead acts once the screen is up
        await self.run_action(action)

    def action_toggle_lang(self) -> None:
        self.lang = "zh" if self.lang == "en" else "en"

    def set_lang(self, lang: Lang) -> None:
        self.lang = lang

    def watch_lang(self, lang: Lang) -> None:
        self.flush_code()  # edits typed just now are the learner's code, kept as they are
        self.session.set_lang(lang)
        self._remember(lang=lang)
        self.main.lang = lang
        self.refresh_bindings()
        self.notify(label("lang_set", lang), timeout=2)

    # ------------------------------------------------------------------ editing

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        if event.text_area.id != "editor" or event.text_area.read_only:
            return
        if self._save_timer is not None:
            self._save_timer.stop()
        self._save_timer = self.set_timer(SAVE_DELAY_S, self.flush_code)

    def flush_code(self) -> None:
        """Save the editor's code for the current step if it changed."""
        if self._save_timer is not None:
            self._save_timer.stop()
            self._save_timer = None
        editor = self.main.editor
        if editor is None or editor.read_only:
            return  # no code step shown yet, or shutting down (action_quit saved the edit)
        if not isinstance(self.session.step, RUNNABLE_KINDS):
            return
        if editor.text != self.session.code():
            self.session.save_code(editor.text)
        self.main.results.set_graph_choices(assigned_names(editor.text))

    def action_reset_code(self) -> None:
        editor = self.main.editor
        if not isinstance(self.session.step, RUNNABLE_KINDS) or editor is None:
            self.notify(label("not_runnable", self.lang), severity="warning")
            return
        starter = self.session.reset_code()
        # One edit kept in the editor's history: ctrl+z brings the learner's code back.
        editor.replace(starter, (0, 0), editor.document.end, maintain_selection_offset=False)
        self.notify(label("code_reset", self.lang), timeout=4)

    # ------------------------------------------------------------------ navigation

    async def open_lesson(self, lesson_id: str) -> None:
        self.flush_code()
        self.session.open_lesson(lesson_id)
        await self._new_step()

    async def goto(self, lesson_id: str, step_id: str | None = None) -> None:
        """Show a step (tests and the review of missed questions)."""
        self.flush_code()
        self.session.goto(lesson_id, step_id)
        await self._new_step()

    async def _new_step(self) -> None:
        await self.main.shown.wait()
        self.graph_view = None
        await self.main.show_step()
        self.refresh_bindings()  # the answer key shows on quiz steps only

    async def action_next_step(self) -> None:
        await self._move(self.session.next_step, "end_of_course")

    async def action_prev_step(self) -> None:
        await self._move(self.session.prev_step, "start_of_course")

    async def _move(self, move: Callable[[], Step | None], at_the_end: str) -> None:
        """One step on or back (crossing lessons); at the end of the course, say so."""
        self.flush_code()
        if move() is None:
            self.notify(label(at_the_end, self.lang))
            return
        await self._new_step()

    @on(LessonList.Picked)
    async def _lesson_picked(self, message: LessonList.Picked) -> None:
        await self.open_lesson(message.lesson_id)

    def action_toggle_lessons(self) -> None:
        self.main.toggle_lessons()

    async def action_hint(self) -> None:
        hint = self.session.next_hint()
        if hint is None or hint.again:
            self.notify(label("no_hints" if hint is None else "no_more_hints", self.lang),
                        timeout=3)
            return
        await self.main.step_pane.show_hints(hint.shown)

    # ------------------------------------------------------------------ running

    def action_run(self) -> None:
        step = self.session.step
        if isinstance(step, (QuizStep, AnswerStep)):
            self.action_check()
        elif isinstance(step, ReadingStep):
            self.notify(label("not_runnable", self.lang), timeout=3)
        elif self._refused_while_running():
            return
        else:
            self.flush_code()
            self.run_code(self.main.graph_code())

    def _refused_while_running(self) -> bool:
        if self.running:
            self.notify(label("already_running", self.lang), severity="warning")
        return self.running

    def action_check(self) -> None:
        """Submit the quiz choice or the typed answer of the current step."""
        step, pane = self.session.step, self.main.step_pane
        if isinstance(step, QuizStep):
            selected = pane.selected_choices()
            if not selected:
                self.notify(label("quiz_nothing_selected", self.lang), severity="warning")
                return
            self.post_message(Attempted(self.session.answer_quiz(selected), self.session.ref))
        elif isinstance(step, AnswerStep):
            self._check_typed(pane.typed_answer())
        else:
            self.action_run()

    @on(StepPane.AnswerTyped)
    def _answer_typed(self, message: StepPane.AnswerTyped) -> None:
        self._check_typed(message.answer)

    def _check_typed(self, typed: str) -> None:
        if not typed.strip():
            self.notify(label("answer_empty", self.lang), severity="warning")
        elif not self._refused_while_running():
            self.check_answer(typed.strip())

    def action_give_up(self) -> None:
        """Show the quiz's answer (the learner's picks, if any, judged)."""
        if isinstance(self.session.step, QuizStep):
            attempt = self.session.give_up(self.main.step_pane.selected_choices())
            self.post_message(Attempted(attempt, self.session.ref))

    def action_cancel_run(self) -> None:
        # The sandbox sees the worker's cancelled_event and kills the run's process.
        if not self.workers.cancel_group(self, "run"):
            self.notify(label("nothing_to_cancel", self.lang), timeout=2)
            return
        self.notify(label("cancelled", self.lang), timeout=2)

    @work(thread=True, exclusive=True, group="run", exit_on_error=False)
    def run_code(self, code: str) -> None:
        worker = get_current_worker()
        ref = self.session.ref
        attempt = self.session.run(code, cancel=worker.cancelled_event,
                                   on_output=self._output_arrived)
        self.post_message(Attempted(attempt, ref, worker))

    @work(thread=True, exclusive=True, group="run", exit_on_error=False)
    def check_answer(self, typed: str) -> None:
        worker = get_current_worker()
        ref = self.session.ref
        attempt = self.session.answer_value(typed, cancel=worker.cancelled_event)
        self.post_message(Attempted(attempt, ref, worker))

    def _output_arrived(self, chunk: str) -> None:
        """From the runner's thread: a chunk of what the learner's run printed."""
        self.post_message(OutputArrived(chunk))

    @on(OutputArrived)
    async def _show_output_chunk(self, message: OutputArrived) -> None:
        if self.running:  # (a chunk that comes after the result has nothing to add)
            await self.main.results.add_live_output(message.chunk)

    @on(Attempted)
    async def _attempted(self, message: Attempted) -> None:
        others = [worker for worker in self.workers if worker.group == "run"
                  and not worker.is_finished and worker is not message.worker]
        if message.attempt.cancelled and others:
            return  # stopped, and the learner has started another since
        self.main.refresh_standing()
        self.refresh_bindings()  # a passed quiz has no answer left to show
        if message.ref != self.session.ref:
            return  # the learner moved on while it ran; the progress marks are updated
        typed = self.session.previous_answer() if isinstance(
            self.session.step, AnswerStep) else ""
        await self.main.show_attempt(message.attempt, typed=typed, code=self.main.graph_code())

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """The one place that hears how workers end: a failure is said (a worker that
        failed posted nothing), and the screen learns whether a run is in flight."""
        worker = event.worker
        if not self.screen_stack:
            return  # shutting down: the workers are cancelled, nothing to say
        if worker.group == "run":
            self.main.running = self._run_worker_busy()
            self.refresh_bindings()  # Cancel in the footer while a run is in flight
        if event.state == WorkerState.ERROR:
            severity: SeverityLevel = (
                "warning" if worker.group in ("devices", "warm-up") else "error")
            self.notify(failure_text(worker.error, self.lang), severity=severity, timeout=8)

    # ------------------------------------------------------------------ graph

    def action_draw_graph(self) -> None:
        results = self.main.results
        if "graph" not in results.shown_tabs:
            self.notify(label("not_runnable", self.lang), timeout=3)
            return
        results.active = "tab-graph"
        expr = results.graph_expr()
        if not expr:
            self.notify(label("graph_help", self.lang), timeout=3)
        elif not self._refused_while_running():
            self.draw_graph(self.main.graph_code(), expr)

    @work(thread=True, exclusive=True, group="run", exit_on_error=False)
    def draw_graph(self, code: str, expr: str) -> None:
        cancel = get_current_worker().cancelled_event
        self.post_message(GraphReady(self.session.graph_of(code, expr, cancel=cancel)))

    @on(GraphReady)
    async def _graph_ready(self, message: GraphReady) -> None:
        self.graph_view = message.view
        await self.main.show_graph(message.view)

    # ------------------------------------------------------------------ devices

    @work(thread=True, exclusive=True, group="devices", exit_on_error=False)
    def ask_devices(self) -> None:
        """Ask the runner which devices exist (slow while torch warms up): off the UI thread."""
        self.post_message(DevicesKnown(self.session.available_devices()))

    @on(DevicesKnown)
    async def _devices_arrived(self, message: DevicesKnown) -> None:
        await self.main.shown.wait()
        self.devices_known(message.devices)

    def devices_known(self, devices: list[str]) -> None:
        """The runner said which devices exist: the one asked for (``auto``: the best) if
        it is among them, else cpu, with the problem on screen."""
        wanted = self.wanted_device
        if wanted == "auto":
            wanted = best_device(devices)
        elif wanted not in devices and f"{wanted}:0" in devices:
            wanted = f"{wanted}:0"
        problem = None
        if wanted not in devices:
            problem = DeviceProblem(wanted, "cpu", tuple(devices))  # on screen until picked
            wanted = "cpu"
        self.offered_devices = list(devices)
        self.select_device(wanted, remember=False)
        self.main.device_problem = problem

    def select_device(self, device: str, *, remember: bool = True) -> None:
        """Run on ``device``; ``remember``: the learner picked it, so the next start does."""
        try:
            self.session.set_device(device)
        except TutorError as exc:
            self.notify(str(exc), severity="error")
            return
        if remember:
            self.main.device_problem = None
            self._remember(device=device)
        self.main.offer_devices(self.session.known_devices or ["cpu"], device)

    def on_code_area_device_picked(self, message: CodeArea.DevicePicked) -> None:
        if message.device != self.session.device:
            self.select_device(message.device)
            self.notify(label("device_set", self.lang, device=message.device), timeout=2)

    def action_cycle_device(self) -> None:
        devices = self.session.known_devices or ["cpu"]
        index = devices.index(self.session.device) if self.session.device in devices else -1
        device = devices[(index + 1) % len(devices)]
        self.select_device(device)
        self.notify(label("device_set", self.lang, device=device), timeout=2)

    # ------------------------------------------------------------------ chat

    async def action_focus_chat(self) -> None:
        await self.main.results.focus_chat()

    @on(ResultTabs.Asked)
    def _asked(self, message: ResultTabs.Asked) -> None:
        if self.session.tutor is None:
            self.notify(label("chat_unavailable", self.lang), severity="warning")
            return
        self.main.results.add_chat(ChatEntry("chat_you", message.question))
        self.ask_tutor(message.question, self.main.graph_code())

    @work(thread=True, group="chat", exit_on_error=False)
    def ask_tutor(self, question: str, code: str) -> None:
        self.post_message(TutorAnswered(self.session.ask(question, code=code)))

    @on(TutorAnswered)
    def _tutor_answered(self, message: TutorAnswered) -> None:
        answer = message.answer
        text = str(getattr(answer, "text", answer))
        notice = getattr(answer, "fallback_notice", None)
        if notice:
            text = f"{text}\n\n*{notice}*"
        # Titles in the learner's language; the ids (``catalog:...``) mean nothing to them.
        sources_for = getattr(answer, "sources_for", None)
        sources = sources_for(self.lang) if callable(sources_for) else []
        self.main.results.add_chat(ChatEntry("chat_tutor", text, tuple(sources)))

    # ------------------------------------------------------------------ highlighting

    @work(thread=True, group="warm-up", exit_on_error=False)
    def _warm_up_highlighting(self) -> None:
        warm_up_highlighting()
        self.post_message(HighlightingReady())

    @on(HighlightingReady)
    def _redraw_code(self) -> None:
        self.main.redraw_code()

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
        """Remembered; the editor follows it (a light syntax theme on light app themes)."""
        if self._main is None:
            return  # the saved theme, set while the app is built
        self._remember(theme=theme)
        self._main.dark = self.current_theme.dark
        editor = self._main.editor if self._main.is_mounted else None
        if editor is not None:
            from tutor.tui.code_area import editor_theme

            editor.theme = editor_theme(self.current_theme.dark)

    # ------------------------------------------------------------------ settings

    def _remember(self, **changes: str | None) -> None:
        if self.settings is not None:
            self.settings.update(**changes)

    # ------------------------------------------------------------------ result tabs, panes

    async def action_show_tab(self, name: str) -> None:
        """Show one result tab (alt+o, v, d, g, t); one the step has not is said, not shown."""
        results = self.main.results
        if name not in results.shown_tabs:
            self.notify(label("tab_not_here", self.lang, tab=label(f"tab_{name}", self.lang)),
                        timeout=2)
            return
        await results.show_result(name)

    def action_resize_text(self, delta: int) -> None:
        self.main.text_share = max(-3, min(3, self.main.text_share + delta))

    # ------------------------------------------------------------------ own editor, progress

    def action_open_in_editor(self) -> None:
        """The code in $VISUAL/$EDITOR (the app steps aside while it runs); what the learner
        saved comes back into the editor as one edit, undoable."""
        import subprocess

        from textual.app import SuspendNotSupported

        from tutor.tui.external_editor import edit_text, editor_command

        editor = self.main.editor
        if editor is None or not isinstance(self.session.step, RUNNABLE_KINDS):
            self.notify(label("editor_no_code", self.lang), severity="warning")
            return
        command = editor_command()
        if command is None:
            self.notify(label("editor_none", self.lang), severity="warning", timeout=6)
            return
        self.flush_code()

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
        if isinstance(picked, tuple):
            await self.goto(*picked)

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
        self.workers.cancel_group(self, "run")  # a run in flight is killed, not left behind
        self.exit()


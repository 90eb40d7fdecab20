"""The app's one screen: the lesson list, the step, the code and the results, laid out for
the terminal's size. It shows what the learning session holds; the app acts on it.

The language and the running state are reactives here, handed down to the widgets' own
reactives; each widget redraws its own words when its language changes.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast, overload

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.reactive import reactive
from textual.screen import Screen
from textual.widget import Widget

from tutor.course.models import AnswerStep, Step
from tutor.i18n import Lang
from tutor.learning import RUNNABLE_KINDS, Attempt, GraphView, LearningSession, assigned_names
from tutor.tui.device_notice import DeviceNotice, DeviceProblem
from tutor.tui.key_bar import KeyBar
from tutor.tui.lesson_list import LessonList
from tutor.tui.markdown_view import CodeView, MarkdownView
from tutor.tui.result_tabs import ChatEntry, ResultTabs, first_tab, tabs_for
from tutor.tui.step_pane import StepPane, StepView
from tutor.tui.top_bar import Standing, TopBar

if TYPE_CHECKING:  # imported when a step first shows code: the editor loads tree-sitter
    from tutor.tui.code_area import CodeArea
    from tutor.tui.code_editor import CodeEditor


def shows_code(step: Step) -> bool:
    """Code steps show the editor; an answer step shows its code read-only, if it has any."""
    return isinstance(step, RUNNABLE_KINDS) or (
        isinstance(step, AnswerStep) and bool(step.code.strip())
    )


W = TypeVar("W", bound=Widget)


class _One(Generic[W]):
    """A typed getter: the screen's one widget of class ``kind`` (``top_bar = _One(TopBar)``)."""

    def __init__(self, kind: type[W]) -> None:
        self.kind = kind

    @overload
    def __get__(self, screen: None, owner: object = None) -> _One[W]: ...

    @overload
    def __get__(self, screen: Screen[Any], owner: object = None) -> W: ...

    def __get__(self, screen: Screen[Any] | None, owner: object = None) -> W | _One[W]:
        return self if screen is None else screen.query_one(self.kind)


def size_classes(width: int, height: int) -> list[str]:
    """The breakpoint classes of a screen this size: for each direction, the class of the
    largest breakpoint not above it (Textual's rule, applied to MainScreen's lists)."""
    classes = []
    for size, breakpoints in ((width, MainScreen.HORIZONTAL_BREAKPOINTS),
                              (height, MainScreen.VERTICAL_BREAKPOINTS)):
        reached = [name for threshold, name in sorted(breakpoints) if size >= threshold]
        classes += reached[-1:]
    return classes


class WorkPane(Vertical):
    """The editor and the result tabs. Toasts stay over it, off the lesson text: the toast
    rack (bottom right of the screen) spans this pane's columns, wherever the screen's
    width, the lesson list and the learner's alt+left/right put it."""

    def on_resize(self) -> None:
        self.call_after_refresh(self._place_toasts)  # once the layout gave this pane its place

    def _place_toasts(self) -> None:
        for rack in self.screen.query("ToastRack"):  # Textual's documented CSS type
            top, right, bottom, _ = rack.styles.margin
            rack.styles.margin = (top, right, bottom, self.region.x)
            rack.styles.width = self.region.width


class MainScreen(Screen[None]):
    # Textual declares these as class-level lists (its own idiom).
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-wide")]  # noqa: RUF012
    VERTICAL_BREAKPOINTS = [(0, "-short"), (36, "-tall")]  # noqa: RUF012

    lang: reactive[Lang] = reactive("en", init=False)
    running: reactive[bool] = reactive(False, init=False)
    """A run (or answer, or graph) is in flight."""
    device_problem: reactive[DeviceProblem | None] = reactive(None, init=False)
    text_share: reactive[int] = reactive(0, init=False)
    """How many steps the learner widened (+) or narrowed (-) the text pane."""

    def __init__(self, session: LearningSession, *, device_problem: DeviceProblem | None = None,
                 dark: bool = True) -> None:
        super().__init__(id="main")
        self.shown = asyncio.Event()
        """Set once the screen is mounted: keys and workers' answers can come before."""
        self.session = session
        self.dark = dark
        self.set_reactive(MainScreen.lang, session.lang)
        self.set_reactive(MainScreen.device_problem, device_problem)

    def compose(self) -> ComposeResult:
        """The first screen, composed with what it shows: each widget is built with its
        state (nothing is filled in once the screen is up, which would cost it another
        layout and frame)."""
        session, step, lang = self.session, self.session.step, self.lang
        progress = self._progress()
        yield TopBar(self._standing(progress), lang, id="topbar", markup=False)
        yield DeviceNotice(self.device_problem, lang, id="notice", markup=False)
        self._mark_step_kind()
        with Horizontal(id="body"):
            yield LessonList(session.course, progress, session.lesson.id, lang,
                             id="lessons")
            pane = StepPane(self.step_view(), lang, focus=not isinstance(step, RUNNABLE_KINDS),
                            id="lesson-pane")
            pane.styles.width = self._text_width()
            yield pane
            with WorkPane(id="work-pane"):
                if shows_code(step):  # composed, not mounted: see _ensure_code_area
                    yield self._new_code_area(focus=True, highlight=False)
                results = ResultTabs(shown=tabs_for(step), active=first_tab(step), lang=lang,
                                     chat=self.chat_intro(),
                                     chat_enabled=session.tutor is not None, id="results")
                results.set_graph_choices(assigned_names(self._step_code()))
                yield results
        yield KeyBar(lang, id="keys")

    class Drawn(Message):
        """The first screen is on the terminal: work that would slow it can start."""

    def on_mount(self) -> None:
        self.shown.set()
        self.call_after_refresh(self.post_message, self.Drawn())

    # ------------------------------------------------------------------ typed getters

    top_bar = _One(TopBar)
    lessons = _One(LessonList)
    step_pane = _One(StepPane)
    results = _One(ResultTabs)

    @property
    def code_area(self) -> CodeArea | None:
        """The editor and run bar, once a step with code has been shown."""
        # By id: the module (and the editor's) is imported when first needed.
        return cast("CodeArea | None", next(iter(self.query("#code-area")), None))

    @property
    def editor(self) -> CodeEditor | None:
        area = self.code_area
        return area.editor if area is not None else None

    # ------------------------------------------------------------------ what is shown

    def step_view(self) -> StepView:
        session = self.session
        return StepView(
            session.lesson,
            session.step,
            session.step_index,
            passed=session.step_passed(session.lesson, session.step),
            attempts=session.attempts(),
            hints=tuple(session.visible_hints()),
            choices=tuple(session.previous_choices()),
            answer=session.previous_answer(),
        )

    def chat_intro(self) -> list[ChatEntry]:
        """The chat of a new step: the tutor's welcome (or why there is no tutor)."""
        from tutor.tui.labels import text

        key = "chat_welcome" if self.session.tutor is not None else "chat_unavailable"
        return [ChatEntry("chat_tutor", text(key))]

    async def show_step(self) -> None:
        """The session's current step, new: its text and controls, its code, the result
        tabs that mean something for it, and the focus where the learner acts."""
        step = self.session.step
        self.refresh_standing()
        await self.step_pane.show(self.step_view())
        # Keys typed while the code area is set up must not reach the last step's widget.
        self.focus_step()
        area = await self._ensure_code_area() if shows_code(step) else self.code_area
        if area is not None:
            area.display = shows_code(step)
        self._show_code_kind()
        self._mark_step_kind()
        self.step_pane.styles.width = self._text_width()
        results = self.results
        results.show_tabs(tabs_for(step), prefer=first_tab(step))
        results.show_attempt(None)
        results.show_graph(None)
        results.reset_chat(self.chat_intro())
        self.load_editor()
        self.focus_step()

    def refresh_standing(self) -> None:
        """Progress marks and the top bar, after an attempt or a move."""
        progress = self._progress()
        self.lessons.show(progress, self.session.lesson.id)
        self.top_bar.standing = self._standing(progress)

    def _progress(self) -> dict[str, tuple[int, int]]:
        session = self.session
        passed = session.store.passed_steps()
        return {lesson.id: session.lesson_progress(lesson, passed)
                for lesson in session.course.lessons}

    def _standing(self, progress: dict[str, tuple[int, int]]) -> Standing:
        session = self.session
        return Standing(
            number=session.course.lessons.index(session.lesson) + 1,
            lesson=session.lesson.title,
            done=sum(done for done, _ in progress.values()),
            total=sum(total for _, total in progress.values()),
            device=session.device,
        )

    async def show_attempt(self, attempt: Attempt, *, typed: str, code: str) -> None:
        """A finished attempt of the current step; the tab that matters most for it."""
        await self.step_pane.show(self.step_view())
        results = self.results
        results.show_attempt(attempt, typed=typed, code=code)
        verdict = attempt.verdict
        if attempt.cancelled or (
            verdict.run is not None and not verdict.run.ok and not attempt.diagnoses
        ):
            await results.show_result("output")
        elif attempt.diagnoses and not verdict.passed:
            await results.show_result("diagnosis")
            from tutor.tui.root_cause import show_root_cause  # the cursor on the root cause

            show_root_cause(self.editor, attempt.diagnoses)
        else:
            await results.show_result("verdict")

    async def show_graph(self, view: GraphView) -> None:
        self.results.show_graph(view)
        await self.results.show_result("graph")

    def focus_step(self) -> None:
        """Focus where the learner acts on this step."""
        editor = self.editor
        if isinstance(self.session.step, RUNNABLE_KINDS) and editor is not None:
            editor.focus()
        else:
            self.step_pane.focus_answer()

    def load_editor(self) -> None:
        """Put the step's code in the editor: the learner's last code, else the starter;
        an answer step's code read-only. Steps without code leave the (hidden) editor be."""
        editor, step = self.editor, self.session.step
        if editor is not None and isinstance(step, (*RUNNABLE_KINDS, AnswerStep)):
            editor.read_only = isinstance(step, AnswerStep)
            editor.load(self._step_code())
        self.results.set_graph_choices(assigned_names(self.graph_code()))

    def _step_code(self) -> str:
        """What the editor shows for the step: the learner's code, or an answer step's."""
        step = self.session.step
        return step.code if isinstance(step, AnswerStep) else self.session.code()

    def graph_code(self) -> str:
        """The code the graph and the tutor see: the editor's, or the answer step's."""
        step, editor = self.session.step, self.editor
        if isinstance(step, AnswerStep):
            return step.code
        if isinstance(step, RUNNABLE_KINDS) and editor is not None:
            return editor.text
        return ""

    def redraw_code(self) -> None:
        """Colour the code drawn plain before the highlighter was ready."""
        for view in self.query(MarkdownView).results(MarkdownView):
            view.redraw_code()
        for code in self.query(CodeView).results(CodeView):
            code.redraw_code()

    # ------------------------------------------------------------------ code area

    def _new_code_area(self, *, focus: bool = False, highlight: bool = True) -> CodeArea:
        from tutor.tui.code_area import CodeArea

        session, step = self.session, self.session.step
        return CodeArea(devices=session.known_devices or ["cpu"], device=session.device,
                        dark=self.dark, lang=self.lang, code=self._step_code(),
                        runnable=isinstance(step, RUNNABLE_KINDS),
                        focus=focus and isinstance(step, RUNNABLE_KINDS), highlight=highlight,
                        id="code-area")

    async def _ensure_code_area(self) -> CodeArea:
        """The code area, mounted the first time a step shows code. When the first screen
        shows code it is composed with the screen instead: mounting it from ``on_mount`` is
        awaited, and Textual lays out and draws the screen once more while it waits."""
        area = self.code_area
        if area is None:
            area = self._new_code_area()
            await self.query_one("#work-pane").mount(area, before=0)
            area.lang, area.running = self.lang, self.running
            session = self.session  # devices may have arrived while it was being mounted
            area.offer_devices(session.known_devices or ["cpu"], session.device)
        return area

    def _show_code_kind(self) -> None:
        area = self.code_area
        if area is not None:
            area.runnable = isinstance(self.session.step, RUNNABLE_KINDS)

    def offer_devices(self, devices: list[str], current: str) -> None:
        area = self.code_area
        if area is not None:
            area.offer_devices(devices, current)
        self.refresh_standing()

    # ------------------------------------------------------------------ reactives

    def watch_lang(self, lang: Lang) -> None:
        # Down to each widget with words, which redraws them (built in this language, they
        # are not bound: a binding would redraw each once more when the screen is up).
        for widget in (self.top_bar, self.query_one(DeviceNotice), self.lessons, self.step_pane,
                       self.results, self.query_one(KeyBar), self.code_area):
            if widget is not None:
                widget.lang = lang
        editor = self.editor
        # An untouched starter, or an answer step's read-only code, follows the language.
        if editor is not None and (editor.read_only or self.session.is_starter(editor.text)):
            self.load_editor()

    def watch_device_problem(self, problem: DeviceProblem | None) -> None:
        self.query_one(DeviceNotice).problem = problem

    def watch_running(self, running: bool) -> None:
        area = self.code_area
        if area is not None:
            area.running = running

    def watch_text_share(self) -> None:
        self.step_pane.styles.width = self._text_width()

    def toggle_lessons(self) -> None:
        """The lesson list: hidden on a narrow screen until asked for, and the other way."""
        self.toggle_class("-lessons-toggled")
        lessons = self.lessons
        if lessons.display:
            lessons.focus()

    def _mark_step_kind(self) -> None:
        """The screen's classes for the step: ``-code`` when it shows code, ``-edits`` when
        the code is the learner's to edit. The work pane's width follows them (app.tcss):
        the text gets more on reading and quiz steps; with code the editor does, most on a
        wide screen when the code is edited (course lines run to 60+ characters)."""
        step = self.session.step
        self.set_class(shows_code(step), "-code")
        self.set_class(isinstance(step, RUNNABLE_KINDS), "-edits")

    def _text_width(self) -> str:
        """The text pane's share (the work pane's is in app.tcss), as the learner widened
        or narrowed it (alt+right, alt+left)."""
        base = 4 if shows_code(self.session.step) else 6
        return f"{max(1, base + self.text_share)}fr"

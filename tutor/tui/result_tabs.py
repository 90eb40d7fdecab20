"""The result panes, as tabs: output, verdict, diagnosis, autograd graph, tutor chat.

What the panes show lives here as state (the last attempt, the graph, the chat); a pane's
widgets are mounted the first time its tab is shown and draw that state on mount. Start-up
builds only the pane on screen, and a step shows only the tabs that mean something for it
(a reading step has nothing to run, a quiz no output or graph).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from rich.text import Text as RichText
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.reactive import reactive
from textual.widget import AwaitMount
from textual.widgets import Button, Input, Select, Static, TabbedContent, TabPane, Tree

from tutor.course.models import AnswerStep, CodeStep, FixStep, QuizStep, ReadingStep, Step
from tutor.i18n import Lang, Text
from tutor.learning import Attempt, GraphView
from tutor.tui.labels import label
from tutor.tui.markdown_view import LessonBody, MarkdownView
from tutor.tui.ordered_keys import OrderedInput
from tutor.tui.relabel import set_label
from tutor.tui.render import (
    GraphItem,
    diagnosis_markdown,
    graph_items,
    graph_message,
    graph_root_label,
    output_text,
    verdict_markdown,
)

TABS = ("output", "verdict", "diagnosis", "graph", "chat")


@dataclass(frozen=True)
class ChatEntry:
    """One message of the chat: who said it (a label key: ``chat_you``, ``chat_tutor``),
    what (in both languages where the app wrote it), and the sources of an answer."""

    who: str
    text: Text | str
    sources: tuple[str, ...] = field(default=())

    def markdown(self, lang: Lang) -> str:
        text = self.text if isinstance(self.text, str) else self.text.get(lang)
        return _chat_markdown(label(self.who, lang), text, list(self.sources))


def tabs_for(step: Step) -> tuple[str, ...]:
    """The tabs worth showing on ``step``: all on code exercises; the verdict on quizzes
    and answer steps (and the graph of an answer step's code); the tutor everywhere."""
    if isinstance(step, (CodeStep, FixStep)):
        return TABS
    from tutor.course.quiz import graph_gives_away  # the answer's own graph would answer it

    if isinstance(step, AnswerStep) and step.code.strip() and not graph_gives_away(step):
        return ("verdict", "graph", "chat")
    if isinstance(step, (QuizStep, AnswerStep)):
        return ("verdict", "chat")
    return ("chat",)


def first_tab(step: Step) -> str:
    """The tab a step opens on: the tutor beside a reading, else the output (or, where
    the step has none, its first tab)."""
    if isinstance(step, ReadingStep):
        return "chat"
    names = tabs_for(step)
    return "output" if "output" in names else names[0]


class ResultTabs(Vertical):
    """Five tabs; ``show_*`` methods take the data to show, panes draw it when they exist."""

    @dataclass
    class Asked(Message):
        """The learner asked the tutor a question (the chat input)."""

        question: str

    lang: reactive[Lang] = reactive("en", init=False)

    def __init__(
        self,
        *,
        shown: tuple[str, ...] = TABS,
        active: str = "output",
        lang: Lang = "en",
        chat: Sequence[ChatEntry] = (),
        chat_enabled: bool = True,
        **kwargs: Any,
    ):
        """``active``'s pane is composed with the tabs, in ``lang``, with ``chat`` (the
        tutor's welcome): the first screen's pane, drawn in its first frame."""
        super().__init__(**kwargs)
        self.set_reactive(ResultTabs.lang, lang)
        self.attempt: Attempt | None = None
        self.graph_view: GraphView | None = None
        self.graph_names: list[str] = []
        self.graph_pick: str | None = None
        """The tensor the graph tab offers: the learner's pick, else the last assigned."""
        self.learner_pick: str | None = None
        self.chat: list[ChatEntry] = list(chat)
        self.chat_enabled = chat_enabled
        self.shown_tabs = shown
        self._first = active
        self._step_known = False

    def compose(self) -> ComposeResult:
        with TabbedContent(id="result-tabs", initial=f"tab-{self._first}"):
            for name in TABS:
                # The tab on screen gets its pane now: mounted later, it came frames after
                # the rest of the first screen. The others are built when first shown.
                panes = [PANES[name](self)] if name == self._first else []
                yield TabPane(label(f"tab_{name}", self.lang), *panes, id=f"tab-{name}")

    _hidden_tabs: frozenset[str] = frozenset()

    def on_mount(self) -> None:
        self.show_tabs(self.shown_tabs, prefer=self._first)

    def _hide_others(self, names: tuple[str, ...]) -> None:
        """Show the tabs ``names`` and hide the others (Textual's public hide/show)."""
        tabs, hidden = self.tabs, set(self._hidden_tabs)
        for name in TABS:
            if name in names and name in hidden:
                tabs.show_tab(f"tab-{name}")
                hidden.discard(name)
            elif name not in names and name not in hidden:
                tabs.hide_tab(f"tab-{name}")
                hidden.add(name)
        self._hidden_tabs = frozenset(hidden)

    @property
    def tabs(self) -> TabbedContent:
        return self.query_one("#result-tabs", TabbedContent)

    @property
    def active(self) -> str:
        return self.tabs.active

    @active.setter
    def active(self, pane_id: str) -> None:
        self.fill(pane_id)
        self.tabs.active = pane_id

    async def activate(self, pane_id: str) -> None:
        """Activate a tab and wait until its widgets are mounted."""
        mounting = self.fill(pane_id)
        self.tabs.active = pane_id
        if mounting is not None:
            await mounting

    async def focus_chat(self) -> None:
        """Show the chat and put the cursor in its question box."""
        await self.activate("tab-chat")
        for box in self.query("#chat-input"):
            box.focus()

    def pane(self, name: str) -> ResultPane | None:
        """The mounted pane ``name`` (``output``, ``verdict``...), if it was ever shown."""
        found = self.query(f"#tab-{name} > ResultPane").results(ResultPane)
        pane = next(found, None)
        return pane if pane is not None and pane.is_mounted else None

    def fill(self, pane_id: str) -> AwaitMount | None:
        """Mount a tab's widgets the first time it is shown."""
        tab_pane = self.tabs.get_pane(pane_id)
        if tab_pane.children:
            return None
        return tab_pane.mount(PANES[pane_id.removeprefix("tab-")](self))

    @on(TabbedContent.TabActivated)
    def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        # A click on a tab. Start-up activates the first tab before the step picks its
        # own (show_tabs), and a stale message for a tab already left mounts nothing.
        if self._step_known and event.pane.id and event.pane.id == self.tabs.active:
            self.fill(event.pane.id)

    def show_tabs(self, names: tuple[str, ...], *, prefer: str | None = None) -> None:
        """Show only the tabs ``names``; the active one stays if it is among them, else
        ``prefer`` (or the first) becomes active."""
        self.shown_tabs = names
        self._step_known = True
        tabs = self.tabs
        self._hide_others(names)
        current = tabs.active.removeprefix("tab-")
        if current not in names or (prefer in names and prefer != current):
            self.active = f"tab-{prefer if prefer in names else names[0]}"
        else:
            self.fill(tabs.active)  # the tab it started on

    async def show_result(self, wanted: str) -> None:
        """Activate the tab ``wanted`` if the step shows it, else the verdict, and wait
        until its pane is drawn."""
        name = wanted if wanted in self.shown_tabs else "verdict"
        if name in self.shown_tabs:
            await self.activate(f"tab-{name}")

    # ------------------------------------------------------------------ state

    def _redraw(self, *names: str) -> None:
        for name in names:
            pane = self.pane(name)
            if pane is not None:
                pane.draw(self)

    def watch_lang(self) -> None:
        for name in TABS:
            set_label(self.tabs.get_tab(f"tab-{name}"), label(f"tab_{name}", self.lang))
        self._redraw(*TABS)

    typed_answer = ""
    """What the learner typed for the attempt shown (answer steps), for 'did you mean'."""
    code = ""
    """The code of the attempt shown, whose names 'did you mean' may suggest."""

    live_output: str | None = None
    """What the run going on has printed so far (None: no run is streaming)."""

    async def add_live_output(self, chunk: str) -> None:
        """More output of the run going on: shown in the Output tab as it comes."""
        first = self.live_output is None
        self.live_output = (self.live_output or "") + chunk
        if first:
            await self.show_result("output")
        self._redraw("output")

    def show_attempt(self, attempt: Attempt | None, *, typed: str = "", code: str = "") -> None:
        self.attempt = attempt
        self.typed_answer, self.code = typed, code
        self.live_output = None
        self._redraw("output", "verdict", "diagnosis")

    def set_graph_choices(self, names: list[str]) -> None:
        """Offer the names the code assigns; keep the learner's pick while it exists, else
        pick the last assigned (usually the result). Code that does not parse (mid-edit)
        gives no names: the previous choices stay."""
        if not names:
            return
        self.graph_names = names
        self.graph_pick = self.learner_pick if self.learner_pick in names else names[-1]
        self._redraw("graph")

    def graph_expr(self) -> str:
        return self.graph_pick or ""

    def show_graph(self, view: GraphView | None) -> None:
        self.graph_view = view
        self._redraw("graph")

    def set_chat_enabled(self, enabled: bool) -> None:
        self.chat_enabled = enabled
        self._redraw("chat")

    def add_chat(self, entry: ChatEntry) -> None:
        self.chat.append(entry)
        self._redraw("chat")

    def reset_chat(self, messages: Sequence[ChatEntry]) -> None:
        """The chat is ``messages`` now, drawn once (clearing and adding redrew it twice)."""
        self.chat = list(messages)
        self._redraw("chat")


class ResultPane(Vertical):
    """One tab's widgets; draws the tabs' state on mount and whenever it changes."""

    def __init__(self, tabs: ResultTabs) -> None:
        super().__init__()
        self.tabs = tabs

    def on_mount(self) -> None:
        self.draw(self.tabs)

    def draw(self, tabs: ResultTabs) -> None:
        raise NotImplementedError  # every pane below draws its own part of the state


class OutputPane(ResultPane):
    def compose(self) -> ComposeResult:
        with VerticalScroll(classes="pane-scroll"):
            yield Static(id="output", markup=False)

    def draw(self, tabs: ResultTabs) -> None:
        if tabs.live_output is not None:
            live = RichText(label("live_output", tabs.lang) + "\n", style="bold yellow")
            live.append(tabs.live_output)
            self.query_one("#output", Static).update(live)
            return
        attempt = tabs.attempt
        run = attempt.run if attempt else None
        passed = attempt is not None and attempt.verdict.passed
        self.query_one("#output", Static).update(
            output_text(run, tabs.lang, error_expected=passed, code=tabs.code))


class _MarkdownPane(ResultPane):
    """A pane that shows the tabs' state as Markdown, scrolled."""

    VIEW_ID: ClassVar[str]

    def compose(self) -> ComposeResult:
        with VerticalScroll(classes="pane-scroll"):
            yield MarkdownView(id=self.VIEW_ID)

    def draw(self, tabs: ResultTabs) -> None:
        self.query_one(MarkdownView).set_markdown(self.markdown(tabs))

    def markdown(self, tabs: ResultTabs) -> str:
        raise NotImplementedError


class VerdictPane(_MarkdownPane):
    VIEW_ID = "verdict"

    def markdown(self, tabs: ResultTabs) -> str:
        return verdict_markdown(tabs.attempt, tabs.lang, typed=tabs.typed_answer, code=tabs.code)


class DiagnosisPane(_MarkdownPane):
    VIEW_ID = "diagnosis"

    def markdown(self, tabs: ResultTabs) -> str:
        return diagnosis_markdown(tabs.attempt, tabs.lang, code=tabs.code)


class GraphPane(ResultPane):
    def compose(self) -> ComposeResult:
        self._names = list(self.tabs.graph_names)
        pick = self.tabs.graph_pick
        with Horizontal(id="graph-bar"):
            select = Select[str]([(name, name) for name in self._names], id="graph-expr",
                                 compact=True)
            if pick is not None:  # else Select's own blank, whose name differs by version
                select.value = pick
            yield select
            yield Button(id="btn-graph", action="app.draw_graph", compact=True)
        yield Static(id="graph-message")
        yield Tree[None]("graph", id="graph-tree")

    def draw(self, tabs: ResultTabs) -> None:
        lang = tabs.lang
        set_label(self.query_one("#btn-graph", Button), label("btn_graph", lang))
        select = self.query_one("#graph-expr", Select)
        select.prompt = label("graph_pick", lang)
        names = tabs.graph_names
        if names:
            with select.prevent(Select.Changed):  # only the learner's picks post Changed
                if self._names != names:
                    select.set_options([(name, name) for name in names])
                    self._names = names
                if tabs.graph_pick is not None and select.value != tabs.graph_pick:
                    select.value = tabs.graph_pick
        message = self.query_one("#graph-message", Static)
        tree: Tree[None] = self.query_one("#graph-tree", Tree)
        tree.clear()
        view = tabs.graph_view
        problem = graph_message(view, lang) if view is not None else label("graph_help", lang)
        root = None
        if problem is None and view is not None and view.probe and view.probe.graph:
            root = graph_items(view.probe.graph, lang)
        if view is None or root is None:
            message.update(problem or label("graph_help", lang))
            tree.display = False
            return
        message.update("")
        tree.display = True
        tree.root.set_label(graph_root_label(view))
        _add_items(tree.root, [root])
        tree.root.expand_all()

    @on(Select.Changed, "#graph-expr")
    def _graph_picked(self, event: Select.Changed) -> None:
        event.stop()
        if isinstance(event.value, str):
            self.tabs.graph_pick = self.tabs.learner_pick = event.value


class ChatPane(ResultPane):
    def compose(self) -> ComposeResult:
        tabs = self.tabs
        with VerticalScroll(id="chat-log"):  # what is said so far, composed: see draw
            for entry in tabs.chat:
                yield _chat_message(entry.markdown(tabs.lang))
        yield OrderedInput(
            placeholder=label("chat_placeholder", tabs.lang),
            disabled=not tabs.chat_enabled,
            id="chat-input",
            compact=True,
        )

    def draw(self, tabs: ResultTabs) -> None:
        chat_input = self.query_one("#chat-input", Input)
        chat_input.placeholder = label("chat_placeholder", tabs.lang)
        chat_input.disabled = not tabs.chat_enabled
        log = self.query_one("#chat-log", VerticalScroll)
        shown = list(log.query_children(LessonBody).results(LessonBody))
        bodies = [entry.markdown(tabs.lang) for entry in tabs.chat]
        if [view.source for view in shown] == bodies[: len(shown)] and len(shown) <= len(bodies):
            new = bodies[len(shown) :]  # the usual case: messages were added
        else:
            log.remove_children()
            new = bodies
        if new:
            log.mount_all([_chat_message(body) for body in new])
            log.scroll_end(animate=False)


    @on(Input.Submitted, "#chat-input")
    def _asked(self, event: Input.Submitted) -> None:
        event.stop()
        question = event.value.strip()
        if question:
            event.input.value = ""
            self.post_message(ResultTabs.Asked(question))


def _chat_message(body: str) -> LessonBody:
    # Code in an answer scrolls sideways rather than wrapping into broken Python.
    return LessonBody(body, classes="chat-message")


def _chat_markdown(who: str, text: str, sources: list[str]) -> str:
    # The colon after the bold name, where Markdown still closes the bold before a
    # Chinese character; a full-width colon carries its own space.
    colon = ": " if who.isascii() else "："
    body = f"**{who}**{colon}{text}"
    if sources:
        body += "\n\n*" + ("、" if not who.isascii() else ", ").join(sources) + "*"
    return body


PANES: dict[str, type[ResultPane]] = {
    "output": OutputPane,
    "verdict": VerdictPane,
    "diagnosis": DiagnosisPane,
    "graph": GraphPane,
    "chat": ChatPane,
}


def _add_items(node: Any, items: list[GraphItem]) -> None:
    for item in items:
        if item.children:
            child = node.add(item.label, expand=True)
            _add_items(child, item.children)
        else:
            node.add_leaf(item.label)

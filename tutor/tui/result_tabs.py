"""The result panes, as tabs: output, verdict, diagnosis, autograd graph, tutor chat."""

from __future__ import annotations

from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import (
    Button,
    Input,
    Select,
    Static,
    TabbedContent,
    TabPane,
    Tree,
)

from tutor.i18n import Lang
from tutor.learning import Attempt, GraphView
from tutor.sandbox.models import RunResult
from tutor.tui.labels import label
from tutor.tui.markdown_view import MarkdownView
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


class ResultTabs(Vertical):
    """Five panes in tabs; ``show_*`` methods render data handed in by the app."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._graph_pick: str | None = None

    def compose(self) -> ComposeResult:
        with TabbedContent(id="result-tabs", initial="tab-output"):
            yield from self._panes()

    def _panes(self) -> ComposeResult:
        with TabPane("Output", id="tab-output"), VerticalScroll(classes="pane-scroll"):
            yield Static(id="output", markup=False)
        with TabPane("Verdict", id="tab-verdict"), VerticalScroll(classes="pane-scroll"):
            yield MarkdownView(id="verdict")
        with TabPane("Diagnosis", id="tab-diagnosis"), VerticalScroll(classes="pane-scroll"):
            yield MarkdownView(id="diagnosis")
        with TabPane("Graph", id="tab-graph"):
            with Horizontal(id="graph-bar"):
                yield Select[str]([], id="graph-expr", compact=True, prompt="tensor")
                yield Button("Draw", id="btn-graph", action="app.draw_graph", compact=True)
            yield Static(id="graph-message")
            yield Tree("graph", id="graph-tree")
        with TabPane("Tutor", id="tab-chat"):
            yield VerticalScroll(id="chat-log")
            yield Input(id="chat-input", compact=True)

    @property
    def tabs(self) -> TabbedContent:
        return self.query_one("#result-tabs", TabbedContent)

    @property
    def active(self) -> str:
        return self.tabs.active

    @active.setter
    def active(self, pane_id: str) -> None:
        self.tabs.active = pane_id

    # ------------------------------------------------------------------ language

    def relabel(self, lang: Lang) -> None:
        for name in TABS:
            set_label(self.tabs.get_tab(f"tab-{name}"), label(f"tab_{name}", lang))
        set_label(self.query_one("#btn-graph", Button), label("btn_graph", lang))
        self.query_one("#graph-expr", Select).prompt = label("graph_pick", lang)
        self.query_one("#chat-input", Input).placeholder = label("chat_placeholder", lang)

    # ------------------------------------------------------------------ panes

    def show_output(self, result: RunResult | None, lang: Lang) -> None:
        self.query_one("#output", Static).update(output_text(result, lang))

    async def show_attempt(self, attempt: Attempt | None, lang: Lang) -> None:
        self.show_output(attempt.run if attempt else None, lang)
        await self.query_one("#verdict", MarkdownView).show(verdict_markdown(attempt, lang))
        await self.query_one("#diagnosis", MarkdownView).show(diagnosis_markdown(attempt, lang))

    def set_graph_choices(self, names: list[str]) -> None:
        """Offer the names the code assigns; keep the learner's pick while it exists, else
        pick the last assigned (usually the result). Code that does not parse (mid-edit)
        gives no names: the previous choices stay."""
        if not names:
            return
        select = self.query_one("#graph-expr", Select)
        pick = self._graph_pick if self._graph_pick in names else names[-1]
        with select.prevent(Select.Changed):  # only the learner's picks post Changed
            select.set_options([(name, name) for name in names])
            select.value = pick

    @on(Select.Changed, "#graph-expr")
    def _graph_picked(self, event: Select.Changed) -> None:
        if isinstance(event.value, str):
            self._graph_pick = event.value

    def graph_expr(self) -> str:
        value = self.query_one("#graph-expr", Select).value
        return value if isinstance(value, str) else ""

    def show_graph(self, view: GraphView | None, lang: Lang) -> None:
        message = self.query_one("#graph-message", Static)
        tree: Tree[None] = self.query_one("#graph-tree", Tree)
        tree.clear()
        if view is None:
            message.update(label("graph_help", lang))
            tree.display = False
            return
        problem = graph_message(view, lang)
        root = graph_items(view.probe.graph, lang) if problem is None and view.probe else None
        if root is None:
            message.update(problem or label("graph_help", lang))
            tree.display = False
            return
        message.update("")
        tree.display = True
        tree.root.set_label(graph_root_label(view))
        _add_items(tree.root, [root])
        tree.root.expand_all()

    def add_chat(self, who: str, text: str, *, sources: list[str] | None = None) -> None:
        log = self.query_one("#chat-log", VerticalScroll)
        body = f"**{who}:** {text}"
        if sources:
            body += "\n\n*" + ", ".join(sources) + "*"
        log.mount(MarkdownView(body, classes="chat-message"))
        log.scroll_end(animate=False)

    def clear_chat(self) -> None:
        self.query_one("#chat-log", VerticalScroll).remove_children()


def _add_items(node: Any, items: list[GraphItem]) -> None:
    for item in items:
        if item.children:
            child = node.add(item.label, expand=True)
            _add_items(child, item.children)
        else:
            node.add_leaf(item.label)

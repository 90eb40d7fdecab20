"""Start-up work the first screen does not need is skipped or deferred (issue 7)."""

from __future__ import annotations

import argparse
import asyncio
import gc
from pathlib import Path
from typing import Any

import pytest
from fresh_process import run_fresh
from pilot_helpers import drive, wait_until
from textual.pilot import Pilot
from textual.widgets.text_area import SyntaxAwareDocument

from tutor.tui.app import TutorApp
from tutor.tui.code_editor import CodeEditor
from tutor.tui.markdown_view import LessonBody

MINI = Path(__file__).resolve().parents[1] / "fixtures" / "mini_course"


def test_collector_back_on_once_the_first_screen_is_drawn(make_app) -> None:
    app: TutorApp = make_app()
    seen: list[bool] = []

    async def main() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            await pilot.pause()
            seen.append(gc.isenabled())

    gc.disable()
    try:
        asyncio.run(main())
    finally:
        gc.enable()
        gc.unfreeze()
    assert seen == [True]


@pytest.mark.parametrize("fails", [False, True])
def test_tutor_command_collects_nothing_until_drawn_and_restores(
    monkeypatch, tmp_path: Path, fails: bool
) -> None:
    import tutor.sandbox
    import tutor.tui.app
    from tutor.cli import app_cmd

    during: list[bool] = []

    class FakeApp:
        return_code = 0

        def run(self) -> None:
            during.append(gc.isenabled())
            if fails:
                raise RuntimeError("boom")

    class FakeSandbox:
        def __init__(self, *args: object, **kwargs: object) -> None:
            pass

        def close(self) -> None:
            pass

    monkeypatch.setattr(tutor.tui.app, "create_app", lambda **kwargs: FakeApp())
    monkeypatch.setattr(tutor.sandbox, "Sandbox", FakeSandbox)
    args = argparse.Namespace(lessons=MINI, data_dir=tmp_path, lang="en", device="cpu")
    assert gc.isenabled()
    if fails:
        with pytest.raises(RuntimeError):
            app_cmd.run(args)
    else:
        assert app_cmd.run(args) == 0
    assert during == [False]
    assert gc.isenabled()


def test_first_screen_builds_only_what_it_shows(make_app) -> None:
    """A reading step: no editor or run bar, and of the result panes only the tutor's;
    the others are built when first shown (and keep what arrived before)."""
    from tutor.tui.result_tabs import ResultTabs

    app: TutorApp = make_app()

    async def main() -> None:
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause()
            results = app.query_one(ResultTabs)
            assert app.code_area() is None
            built = [
                name
                for name in ("output", "verdict", "diagnosis", "graph", "chat")
                if results.pane(name) is not None
            ]
            assert built == ["chat"]
            await pilot.press("ctrl+n")  # a code step: the code area and the output pane
            await pilot.pause()
            assert app.code_area() is not None
            assert results.pane("output") is not None and results.pane("verdict") is None

    asyncio.run(main())


def test_first_screen_imports_no_editor_help_quiz_widgets_or_pydantic(tmp_path: Path) -> None:
    """TextArea (tree-sitter), the help screen's DataTable, the quiz widgets, the
    diagnosis, grading and chat packages and the sandbox's models are imported when first
    needed, not before the first screen; with the course cached, neither is pydantic (~0.2 s),
    and validating YAML still works afterwards."""
    script = """
import asyncio, os, sys, tempfile
from pathlib import Path
os.environ["TUTOR_CACHE_DIR"] = sys.argv[1]
from tutor.course import load_course
from tutor.progress import ProgressStore
from tutor.tui.app import create_app

course = load_course(Path("tests/fixtures/mini_course"))
if sys.argv[2] == "fill":
    print(len(course.lessons))
    raise SystemExit
store = ProgressStore(Path(tempfile.mkdtemp()) / "p.sqlite")
class Runner:  # the fakes of tui_fakes import grading and diagnosis models themselves
    def devices(self):
        return ["cpu"]

app = create_app(course=course, runner=Runner(), store=store, tutor=None)
late = ["textual.widgets._text_area", "tree_sitter", "textual.widgets._data_table",
        "textual.widgets._radio_set", "textual.widgets._selection_list",
        "tutor.diagnosis", "tutor.grading", "tutor.chat", "tutor.sandbox.models",
        "pydantic", "pydantic_core"]
async def main():
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        print(app.query_one("#topbar").render())
        print(sorted(name for name in late if name in sys.modules))
        await pilot.press("ctrl+n", "ctrl+n", "f1")
        await pilot.pause()
        print(sorted(name for name in late if name in sys.modules))
asyncio.run(main())
from tutor.course import load_lesson
again = load_lesson(sorted(Path("tests/fixtures/mini_course").glob("*.yaml"))[0])
print(again == course.lessons[0], "pydantic" in sys.modules)
"""
    cache = str(tmp_path / "cache")
    (filled,) = run_fresh(script, cache, "fill")
    assert int(filled) >= 1
    *_, topbar, before, after, validated = run_fresh(script, cache, "draw")
    assert "autograd tutor" in topbar  # the first screen is up
    assert before == "[]"
    assert "'textual.widgets._text_area'" in after and "'textual.widgets._radio_set'" in after
    assert "'textual.widgets._data_table'" in after
    assert validated == "True True"


def test_editor_on_the_first_screen_is_highlighted_after_it(
    make_app, store, monkeypatch
) -> None:
    """Resuming on a code step: the editor is drawn plain in the first frame and gets its
    syntax tree right after it."""
    store.set_position("mini-basics", "first-backward")
    app: TutorApp = make_app()
    languages: list[str | None] = []
    real_drawn = TutorApp._first_frame_drawn

    def drawn(self: TutorApp) -> None:
        languages.append(self.query_one("#editor", CodeEditor).language)  # in the first frame
        real_drawn(self)

    monkeypatch.setattr(TutorApp, "_first_frame_drawn", drawn)

    async def main() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            await pilot.pause()
            editor = app.query_one("#editor", CodeEditor)
            assert editor.language == "python"
            assert isinstance(editor.document, SyntaxAwareDocument)
            assert editor.text == app.session.code()  # the starter, as always

    asyncio.run(main())
    assert languages == [None]


def test_first_screen_composes_the_step_text_instead_of_mounting_it(make_app, monkeypatch) -> None:
    """The first step's text is composed with the screen. Put into an empty body from
    ``on_mount`` (its blocks removed, then new ones mounted and awaited), Textual laid out
    and drew the screen while it waited, and then again: ~0.25 s of start-up (issue 7)."""
    remounts: list[str] = []
    real_remove_children = LessonBody.remove_children

    def counting_remove_children(self: LessonBody, *args: Any, **kwargs: Any) -> Any:
        remounts.append(self.id or "")
        return real_remove_children(self, *args, **kwargs)

    monkeypatch.setattr(LessonBody, "remove_children", counting_remove_children)
    app = make_app()

    async def scenario(app: TutorApp, pilot: Pilot[Any]) -> None:
        assert "Tracking gradients" in app.query_one("#step-body", LessonBody).source
        assert app.query_one("#step-body", LessonBody).children
        assert remounts == []

    drive(app, scenario)


def test_footer_keys_come_with_the_first_screen_and_are_rebuilt_only_when_they_change(
    make_app, monkeypatch
) -> None:
    """Textual's footer rebuilt its keys after every change of bindings: six times during
    start-up, the keys drawn ~0.2 s after the rest of the first screen (issue 7)."""
    from textual.widgets._footer import FooterKey

    from tutor.tui.compact_footer import CompactFooter

    rebuilds: list[int] = []
    real_recompose = CompactFooter.recompose

    async def counting_recompose(self: CompactFooter) -> None:
        rebuilds.append(1)
        await real_recompose(self)

    monkeypatch.setattr(CompactFooter, "recompose", counting_recompose)
    app = make_app()

    def keys() -> list[FooterKey]:
        return list(app.query_one(CompactFooter).query(FooterKey).results(FooterKey))

    async def scenario(app: TutorApp, pilot: Pilot[Any]) -> None:
        first = keys()
        assert [key.description for key in first][:3] == ["Run", "Hint", "Next"]
        assert rebuilds == []  # composed with the footer, never rebuilt to the same keys
        app.refresh_bindings()
        app.query_one("#lessons").focus()
        await pilot.pause()
        assert keys() == first and rebuilds == []
        await app.action_toggle_lang()
        # the rebuild runs after the next refresh
        await wait_until(pilot, lambda: bool(keys()) and keys()[0].description == "运行")
        assert len(rebuilds) == 1

    drive(app, scenario)


def test_code_area_on_the_first_screen_is_composed_with_it(make_app, store, monkeypatch) -> None:
    """Resuming on a code step: the editor and run bar are composed with the screen, not
    mounted from ``on_mount`` (an awaited mount draws the screen once more while it waits)."""
    at_mount: list[Any] = []
    real_on_mount = TutorApp.on_mount

    async def on_mount(self: TutorApp) -> None:
        at_mount.append(self.code_area())
        await real_on_mount(self)

    monkeypatch.setattr(TutorApp, "on_mount", on_mount)
    store.set_position("mini-basics", "first-backward")
    app = make_app()

    async def scenario(app: TutorApp, pilot: Pilot[Any]) -> None:
        area = app.code_area()
        assert at_mount == [area] and area is not None  # there before on_mount ran
        assert app.query_one("#editor", CodeEditor).text == app.session.code()
        app.session.goto("mini-basics", "intro")  # a reading step: the area is hidden...
        await app.render_all(new_step=True)
        assert not area.display
        app.session.goto("mini-basics", "first-backward")  # ...and shown again, not remade
        await app.render_all(new_step=True)
        assert app.code_area() is area and area.display

    drive(app, scenario)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_tutor_pane_comes_with_the_first_screen(make_app, monkeypatch, lang) -> None:
    """On a reading step the tutor's tab is the one shown: its input and welcome line are
    composed with the screen. Mounted into it once it was up, they came ~0.25 s after the
    rest of the first screen in a terminal (the warm-ups had started by then)."""
    from textual.widgets import Input

    from tutor.tui import result_tabs
    from tutor.tui.result_tabs import ChatPane, ResultTabs

    mounted: list[str] = []
    drawing: list[bool] = []
    real_fill, real_draw = ResultTabs.fill, ChatPane.draw
    real_message = result_tabs._chat_message

    def fill(self: ResultTabs, pane_id: str) -> Any:
        mounting = real_fill(self, pane_id)
        if mounting is not None:
            mounted.append(pane_id)
        return mounting

    def draw(self: ChatPane, tabs: ResultTabs) -> None:
        drawing.append(True)
        try:
            real_draw(self, tabs)
        finally:
            drawing.pop()

    def message(body: str) -> Any:
        if drawing:  # a message mounted by a redraw, not composed with the pane
            mounted.append(body)
        return real_message(body)

    monkeypatch.setattr(ResultTabs, "fill", fill)
    monkeypatch.setattr(ChatPane, "draw", draw)
    monkeypatch.setattr(result_tabs, "_chat_message", message)
    app = make_app(lang=lang)

    async def scenario(app: TutorApp, pilot: Pilot[Any]) -> None:
        assert app.query_one("#chat-input", Input).placeholder == {
            "en": "Ask the tutor…", "zh": "向导师提问…"}[lang]
        (welcome,) = app.query("#chat-log LessonBody").results(LessonBody)
        assert welcome.source.startswith({"en": "**Tutor**: ", "zh": "**导师**："}[lang])
        assert mounted == []  # composed, not mounted after the first screen
        await pilot.press("ctrl+l")  # the other language: the same pane, its words changed
        await pilot.pause()
        assert app.query_one("#chat-input", Input).placeholder == {
            "zh": "Ask the tutor…", "en": "向导师提问…"}[lang]

    drive(app, scenario)

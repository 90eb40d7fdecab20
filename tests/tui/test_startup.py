"""The first screen: what it shows, in the learner's language, from the first frame; what
it does not show is built when first needed. (How fast it comes is measured by
benchmarks/bench_startup.py, never asserted.)"""

from __future__ import annotations

import argparse
import asyncio
import gc
from pathlib import Path
from typing import Any

import pytest
from pilot_helpers import drive
from textual.pilot import Pilot
from textual.widgets import Input

from tutor.tui.app import TutorApp
from tutor.tui.code_editor import CodeEditor
from tutor.tui.markdown_view import LessonBody

MINI = Path(__file__).resolve().parents[1] / "fixtures" / "mini_course"


def test_collector_back_on_once_the_first_screen_is_drawn(make_app) -> None:
    """``tutor`` starts with the garbage collector off; the app turns it back on."""
    app: TutorApp = make_app()
    seen: list[bool] = []

    async def main() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            for _ in range(50):
                if gc.isenabled():
                    break
                await pilot.pause(0.02)
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
    import tutor.tui.app
    from tutor.cli import app_cmd

    during: list[bool] = []

    class FakeApp:
        return_code = 0

        def run(self) -> None:
            during.append(gc.isenabled())
            if fails:
                raise RuntimeError("boom")

    monkeypatch.setattr(tutor.tui.app, "TutorApp", lambda session, **_: FakeApp())
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

    async def scenario(app: TutorApp, pilot: Pilot[Any]) -> None:
        results = app.main.results
        assert app.main.code_area is None
        built = [name for name in ("output", "verdict", "diagnosis", "graph", "chat")
                 if results.pane(name) is not None]
        assert built == ["chat"]
        await pilot.press("ctrl+n")  # a code step: the code area and the output pane
        await pilot.pause()
        assert app.main.code_area is not None
        assert results.pane("output") is not None and results.pane("verdict") is None

    drive(make_app(), scenario, size=(100, 30))


def test_first_screen_shows_the_step_text(make_app) -> None:
    async def scenario(app: TutorApp, pilot: Pilot[Any]) -> None:
        body = app.query_one("#step-body", LessonBody)
        assert "Tracking gradients" in body.source and body.children

    drive(make_app(), scenario)


def test_code_step_on_the_first_screen(make_app, store) -> None:
    """Resuming on a code step: the editor is there with the learner's code, highlighted;
    a reading step hides it, and the next code step shows the same one again."""
    store.set_position("mini-basics", "first-backward")

    async def scenario(app: TutorApp, pilot: Pilot[Any]) -> None:
        area = app.main.code_area
        assert area is not None and area.display
        editor = app.query_one("#editor", CodeEditor)
        assert editor.language == "python"
        assert editor.text == app.session.code()  # the starter, as always
        await app.goto("mini-basics", "intro")  # a reading step: the area is hidden...
        assert not area.display
        await app.goto("mini-basics", "first-backward")  # ...and shown again, not remade
        assert app.main.code_area is area and area.display

    drive(make_app(), scenario)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_tutor_pane_comes_with_the_first_screen(make_app, lang) -> None:
    """On a reading step the tutor's tab is the one shown, in the learner's language; a
    language switch changes its words in the same pane."""
    other = {"en": "zh", "zh": "en"}[lang]
    placeholder = {"en": "Ask the tutor…", "zh": "向导师提问…"}
    welcome = {"en": "**Tutor**: ", "zh": "**导师**："}

    async def scenario(app: TutorApp, pilot: Pilot[Any]) -> None:
        assert app.main.results.active == "tab-chat"
        box = app.query_one("#chat-input", Input)
        assert box.placeholder == placeholder[lang]
        (message,) = app.query("#chat-log LessonBody").results(LessonBody)
        assert message.source.startswith(welcome[lang])
        await pilot.press("ctrl+l")
        await pilot.pause()
        assert app.query_one("#chat-input", Input) is box
        assert box.placeholder == placeholder[other]
        (message,) = app.query("#chat-log LessonBody").results(LessonBody)
        assert message.source.startswith(welcome[other])

    drive(make_app(lang=lang), scenario)



@pytest.mark.parametrize("size", [(80, 24), (109, 35), (110, 36), (200, 50)])
def test_the_screen_starts_with_the_classes_textual_gives_its_size(make_app, size) -> None:
    """The screen is built with its breakpoint classes; once Textual has applied its own
    rule (on the first resize) they are the same."""
    from tutor.tui.main_screen import MainScreen, size_classes

    breakpoints = MainScreen.HORIZONTAL_BREAKPOINTS + MainScreen.VERTICAL_BREAKPOINTS
    names = {name for _, name in breakpoints}

    async def scenario(app: TutorApp, pilot: Pilot[Any]) -> None:
        assert app.main.classes & names == set(size_classes(*size))

    drive(make_app(), scenario, size=size)

"""Snapshot tests of the main screens in English and Chinese, at 80x24 and 160x50.

Fakes make them deterministic. Update with ``pytest tests/tui/test_snapshots.py
--snapshot-update`` and look at the SVGs before committing them."""

from __future__ import annotations

from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, RadioSet, TextArea

from tutor.tui.app import TutorApp

SIZES = [(80, 24), (160, 50)]
LANGS = ["en", "zh"]


async def settle(app: TutorApp, pilot: Pilot[Any]) -> None:
    """Wait for runs to finish, then take focus off the editor and inputs: a blinking
    cursor would make the picture depend on the moment it is taken."""
    for _ in range(250):
        if not app.running and not app.workers:
            break
        await pilot.pause(0.02)
    for widget in [*app.query(TextArea), *app.query(Input)]:
        widget.cursor_blink = False
    app.set_focus(None)
    await pilot.pause(0.3)


def failed_run(lesson: str, step: str, code: str):
    async def run_before(pilot: Pilot[Any]) -> None:
        app = pilot.app
        assert isinstance(app, TutorApp)
        await app.goto(lesson, step)
        await pilot.pause()
        app.query_one("#editor", TextArea).text = code
        await pilot.press("ctrl+t")
        await pilot.press("ctrl+r")
        await settle(app, pilot)

    return run_before


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("lang", LANGS)
def test_code_step_with_diagnosis(snap_compare, make_app, lang: str, size) -> None:
    app = make_app(lang=lang)
    code = "import torch\n\nx = torch.ones(2, requires_grad=True)\nz = x + 2\nraise RuntimeError\n"
    assert snap_compare(
        app, terminal_size=size, run_before=failed_run("mini-graph", "fix-scalar", code)
    )


@pytest.mark.parametrize("size", [(80, 24), (120, 36)], ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("lang", LANGS)
def test_code_step_stopped_at_the_memory_limit(snap_compare, make_app, lang: str, size) -> None:
    """Issue 22 #7 and #9: a long line wraps in the editor (it was cut at the edge), and a
    run stopped at a limit says its line and where it was."""
    from tui_fakes import HOG

    code = ("import torch\n\nx = torch.tensor([-1., 0.3, 2.], dtype=torch.float64, "
            f"requires_grad=True)\nbig = {HOG}\n")

    async def run_before(pilot: Pilot[Any]) -> None:
        await failed_run("mini-basics", "first-backward", code)(pilot)
        await pilot.press("alt+o")
        await settle(pilot.app, pilot)  # type: ignore[arg-type]

    assert snap_compare(make_app(lang=lang), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("lang", LANGS)
def test_quiz_step_answered(snap_compare, make_app, lang: str, size) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        app = pilot.app
        assert isinstance(app, TutorApp)
        await app.goto("mini-basics", "who-tracks")
        await pilot.pause()
        app.query_one("#quiz-choices", RadioSet).focus()
        await pilot.press("down", "enter")
        await pilot.click("#btn-check")
        await settle(app, pilot)

    assert snap_compare(make_app(lang=lang), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", [(80, 24), (100, 30)], ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("lang", LANGS)
def test_reading_step(snap_compare, make_app, lang: str, size) -> None:
    """The first screen: the text beside the tutor, whose one tab fits (five cut it at
    100 columns); Chinese wraps between characters."""

    async def run_before(pilot: Pilot[Any]) -> None:
        await settle(pilot.app, pilot)  # type: ignore[arg-type]

    assert snap_compare(make_app(lang=lang), terminal_size=size, run_before=run_before)


def test_help_screen(snap_compare, make_app) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        await pilot.press("f1")
        await settle(pilot.app, pilot)  # type: ignore[arg-type]

    assert snap_compare(make_app(), terminal_size=(80, 24), run_before=run_before)


@pytest.mark.parametrize("lang", LANGS)
def test_missing_device_said_on_the_first_screen(snap_compare, make_app, lang: str) -> None:
    """Issue 22 #4: ``--device cuda`` where there is none is said above the panes."""
    from tui_fakes import FakeRunner

    async def run_before(pilot: Pilot[Any]) -> None:
        app = pilot.app
        assert isinstance(app, TutorApp)
        for _ in range(100):
            if app.offered_devices is not None:
                break
            await pilot.pause(0.02)
        await settle(app, pilot)

    app = make_app(lang=lang, device="cuda", runner=FakeRunner(devices=["cpu"]))
    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


@pytest.mark.parametrize("size", [(80, 24), (120, 36)], ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("lang", LANGS)
def test_answer_step(snap_compare, make_app, lang: str, size) -> None:
    """Issue 22 #7: the answer step's code and its placeholder were cut."""

    async def run_before(pilot: Pilot[Any]) -> None:
        app = pilot.app
        assert isinstance(app, TutorApp)
        await app.goto("mini-basics", "grad-value")
        await pilot.pause(0.2)  # the answer box takes focus after its step is laid out
        await settle(app, pilot)

    assert snap_compare(make_app(lang=lang), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("lang", LANGS)
def test_progress_view(snap_compare, make_app, lang: str) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        app = pilot.app
        assert isinstance(app, TutorApp)
        await app.goto("mini-basics", "who-tracks")
        app.session.answer_quiz([0])
        await pilot.press("alt+p")
        await settle(app, pilot)

    assert snap_compare(make_app(lang=lang), terminal_size=(120, 36), run_before=run_before)


def test_review_of_missed_quizzes(snap_compare, make_app) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        app = pilot.app
        assert isinstance(app, TutorApp)
        await app.goto("mini-basics", "who-tracks")
        app.session.answer_quiz([0])
        await pilot.press("alt+r")
        await settle(app, pilot)

    assert snap_compare(make_app(lang="zh"), terminal_size=(80, 24), run_before=run_before)


@pytest.mark.parametrize("lang", LANGS)
def test_reading_step_wide(snap_compare, make_app, lang: str) -> None:
    """Issue 22 #7: at 200 columns the lesson list kept ~29 columns."""

    async def run_before(pilot: Pilot[Any]) -> None:
        await settle(pilot.app, pilot)  # type: ignore[arg-type]

    assert snap_compare(make_app(lang=lang), terminal_size=(200, 50), run_before=run_before)

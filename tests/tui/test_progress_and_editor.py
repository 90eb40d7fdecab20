"""The TUI's progress view, its review of missed quiz questions, and editing the code in
the learner's own $EDITOR (issue 22, "Expected and missing")."""

from __future__ import annotations

import sys
from typing import Any

import pytest
from test_app_pilot import drive, go_to, wait_until
from textual.pilot import Pilot
from textual.widgets import DataTable, OptionList, TextArea

from tutor.tui.app import TutorApp
from tutor.tui.external_editor import edit_text, editor_command
from tutor.tui.progress_screens import missed_quizzes, progress_rows


def test_progress_rows_and_missed_quizzes(make_app) -> None:
    app = make_app()
    session = app.session
    session.goto("mini-basics", "who-tracks")
    session.answer_quiz([0])  # wrong
    rows = progress_rows(session, "en")
    assert [row.number for row in rows] == [1, 2]
    assert rows[0].attempts == 1 and rows[0].passed == 0 and rows[0].next_step
    [missed] = missed_quizzes(session, "zh")
    assert (missed.lesson_id, missed.step_id, missed.attempts) == ("mini-basics", "who-tracks", 1)
    assert "谁会追踪历史" in missed.title
    session.answer_quiz([1])  # right: no longer missed
    assert missed_quizzes(session, "en") == []


def test_review_screen_opens_the_missed_question(make_app) -> None:
    async def scenario(app: TutorApp, pilot: Pilot[Any]) -> None:
        app.session.goto("mini-basics", "who-tracks")
        app.session.answer_quiz([0])
        await go_to(app, pilot, "mini-basics", "intro")
        await pilot.press("alt+r")
        await pilot.pause()
        options = app.screen.query_one("#review-list", OptionList)
        assert options.option_count == 1
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.session.ref == "mini-basics/who-tracks")

    drive(make_app(), scenario)


def test_progress_screen_lists_every_lesson(make_app) -> None:
    async def scenario(app: TutorApp, pilot: Pilot[Any]) -> None:
        await pilot.press("alt+p")
        await pilot.pause()
        table = app.screen.query_one("#progress-table", DataTable)
        assert table.row_count == len(app.session.course.lessons)
        await pilot.press("escape")
        await pilot.pause()
        assert not app.screen.query("#progress-table")

    drive(make_app(), scenario)


def test_editor_command_prefers_visual() -> None:
    assert editor_command({"VISUAL": "code -w", "EDITOR": "vim"}) == ["code", "-w"]
    assert editor_command({"EDITOR": "nano"}) == ["nano"]
    assert editor_command({}) is None


def test_edit_text_returns_what_the_editor_saved() -> None:
    appender = [sys.executable, "-c",
                "import sys; open(sys.argv[1], 'a').write('# edited\\n')"]
    assert edit_text("x = 1\n", appender) == "x = 1\n# edited\n"
    with pytest.raises(Exception):  # noqa: B017 (a failing editor: CalledProcessError)
        edit_text("x", [sys.executable, "-c", "raise SystemExit(3)"])


def test_ctrl_o_opens_the_code_in_editor(make_app, monkeypatch) -> None:
    monkeypatch.setenv("VISUAL", f"{sys.executable} -c \"import sys; "
                       f"open(sys.argv[1], 'w').write('y = 2\\\\n')\"")

    async def scenario(app: TutorApp, pilot: Pilot[Any]) -> None:
        await go_to(app, pilot, "mini-basics", "first-backward")
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: app.query_one("#editor", TextArea).text == "y = 2\n")
        assert app.session.code() == "y = 2\n"  # saved as the learner's code
        await pilot.press("ctrl+z")  # and undoable
        await pilot.pause()
        assert app.query_one("#editor", TextArea).text != "y = 2\n"

    drive(make_app(), scenario)

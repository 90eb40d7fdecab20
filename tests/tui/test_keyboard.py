"""Keyboard-only use: keys in typing order, leaving the editor, the quiz by keys alone."""

from __future__ import annotations

from typing import Any

from test_app_pilot import drive, go_to, wait_until
from textual import events
from textual.containers import VerticalScroll
from textual.pilot import Pilot
from textual.widgets import DataTable, Input, RadioButton, RadioSet, SelectionList, TextArea

from tutor.tui.app import TutorApp

BURST = [*"abcdef", "backspace", "backspace", "X", "Y", "left", "left", "Z"]
"""What a terminal delivers in one read when a learner fixes a typo and keeps typing."""


async def type_burst(app: TutorApp, pilot: Pilot[Any]) -> None:
    """Queue every key before any is handled, as the terminal driver does (``pilot.press``
    waits after each key, which hid the bug)."""
    for key in BURST:
        app.post_message(events.Key(key, key if len(key) == 1 else None))
    for _ in range(5):
        await pilot.pause()


def test_keys_after_backspace_keep_their_order(make_app) -> None:
    """QA2 #1: ``abcdef`` BSpace BSpace ``XY`` left ``abcdef`` (Textual ran the Input's
    Backspace binding only after the following characters were inserted)."""

    async def scenario(app: TutorApp, pilot: Pilot[Any]) -> None:
        await go_to(app, pilot, "mini-basics", "grad-value")
        answer = app.query_one("#answer-input", Input)
        answer.focus()
        await pilot.pause()
        await type_burst(app, pilot)
        assert answer.value == "abcdZXY"

        await go_to(app, pilot, "mini-basics", "first-backward")
        editor = app.query_one("#editor", TextArea)
        editor.text = ""
        editor.focus()
        await pilot.pause()
        await type_burst(app, pilot)
        assert editor.text == "abcdZXY"

        chat = app.query_one("#chat-input", Input)
        chat.focus()
        await pilot.pause()
        await type_burst(app, pilot)
        assert chat.value == "abcdZXY"

    drive(make_app(), scenario)


def test_escape_leaves_the_editor_and_help_says_so(make_app) -> None:
    async def scenario(app: TutorApp, pilot: Pilot[Any]) -> None:
        await go_to(app, pilot, "mini-basics", "first-backward")
        editor = app.query_one("#editor", TextArea)
        editor.focus()
        await pilot.press("x", "tab")  # once the learner types, Tab indents
        await pilot.pause()
        assert editor.has_focus and editor.text.startswith("x   import")  # to the tab stop
        await pilot.press("escape")
        await pilot.pause()
        assert not editor.has_focus and app.focused is not None
        await pilot.press("shift+tab")
        await pilot.pause()
        assert editor.has_focus
        await pilot.press("f1")
        await pilot.pause()
        table = app.screen.query_one("#help-table", DataTable)
        rows = [tuple(str(cell) for cell in table.get_row_at(i)) for i in range(table.row_count)]
        assert ("escape", "Leave the code editor") in rows
        assert ("space / enter", "Pick a quiz choice (arrows move)") in rows

    drive(make_app(), scenario)


def choice_marks(choices: SelectionList[int]) -> list[str]:
    """The glyph inside each choice's box, as drawn."""
    return [choices.render_line(y).text.split("▌")[0][-1] for y in range(choices.option_count)]


def test_quiz_by_keyboard_alone_with_visible_marks(make_app) -> None:
    """QA2 #9: Tab away from the choices and Shift+Tab back, Space and Enter pick, and the
    picked state is a different glyph (not only a colour)."""

    async def scenario(app: TutorApp, pilot: Pilot[Any]) -> None:
        await go_to(app, pilot, "mini-graph", "what-stops-tracking")  # several answers
        choices = app.query_one("#quiz-choices", SelectionList)
        assert choices.has_focus
        assert choice_marks(choices) == [" "] * choices.option_count
        await pilot.press("tab")
        await pilot.pause()
        assert app.focused is app.query_one("#btn-check")
        await pilot.press("shift+tab")
        await pilot.pause()
        assert choices.has_focus
        await pilot.press("down", "space")
        await pilot.pause()
        assert choices.selected == [1]
        assert choice_marks(choices)[:2] == [" ", "✓"]
        await pilot.press("down", "enter")
        await pilot.pause()
        assert choices.selected == [1, 2]

        await go_to(app, pilot, "mini-basics", "who-tracks")  # one answer: radio buttons
        radio = app.query_one("#quiz-choices", RadioSet)
        assert radio.has_focus
        buttons = list(radio.query(RadioButton))
        assert [str(b.render())[1] for b in buttons] == ["○"] * len(buttons)
        await pilot.press("down", "space")
        await pilot.pause()
        assert radio.pressed_index == 1
        assert [str(b.render())[1] for b in buttons][:2] == ["○", "●"]
        await pilot.press("tab", "shift+tab", "up", "enter")
        await pilot.pause()
        assert radio.pressed_index == 0
        await pilot.press("tab", "enter")  # the Check button
        await wait_until(pilot, lambda: app.session.attempts() == 1)

    drive(make_app(), scenario)


def test_the_newest_hint_is_scrolled_into_view(make_app) -> None:
    """QA2 #27: at 80x24 the second hint of a real lesson was below the fold while a toast
    said there were no more hints (the mini lesson's text is shorter: a lower screen)."""

    async def scenario(app: TutorApp, pilot: Pilot[Any]) -> None:
        await go_to(app, pilot, "mini-basics", "first-backward")
        scroll = app.query_one("#step-scroll", VerticalScroll)
        for _ in range(2):
            await pilot.press("ctrl+t")
            await pilot.pause()
            await pilot.pause()
        assert scroll.max_scroll_y > 0  # the text does not fit: this test means something
        assert scroll.scroll_y == scroll.max_scroll_y
        hints = app.query_one("#step-hints")
        assert hints.region.bottom <= scroll.region.bottom

    drive(make_app(), scenario, size=(80, 16))


def test_tab_cycling_passes_through_the_editor_without_indenting(make_app) -> None:
    """Issue 22 #6: six Tabs through the screen landed in the editor and indented the code
    at each press; Tab only indents once the learner works in the editor."""

    async def scenario(app: TutorApp, pilot: Pilot[Any]) -> None:
        await go_to(app, pilot, "mini-basics", "first-backward")
        editor = app.query_one("#editor", TextArea)
        before = editor.text
        app.query_one("#btn-next").focus()
        visited = set()
        for _ in range(12):
            await pilot.press("tab")
            await pilot.pause()
            visited.add(app.focused.id if app.focused else None)
        assert "editor" in visited  # the cycle went through it...
        assert editor.text == before  # ...and left the code as it was

    drive(make_app(), scenario)


def test_select_all_in_the_editor(make_app) -> None:
    async def scenario(app: TutorApp, pilot: Pilot[Any]) -> None:
        await go_to(app, pilot, "mini-basics", "first-backward")
        editor = app.query_one("#editor", TextArea)
        editor.focus()
        await pilot.press("ctrl+a")
        await pilot.pause()
        assert editor.selected_text == editor.text and editor.text
        await pilot.press("z")
        assert editor.text == "z"

    drive(make_app(), scenario)


def test_reset_code_can_be_undone(make_app) -> None:
    """Issue 22 #6: F7 replaced the learner's code with the starter for good."""

    async def scenario(app: TutorApp, pilot: Pilot[Any]) -> None:
        await go_to(app, pilot, "mini-basics", "first-backward")
        editor = app.query_one("#editor", TextArea)
        editor.focus()
        await pilot.press("ctrl+a", *"mine = 1")
        await pilot.pause()
        assert editor.text == "mine = 1"
        await pilot.press("f7")
        await pilot.pause()
        assert editor.text == app.session.starter_code()
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert editor.text == "mine = 1"
        await wait_until(pilot, lambda: app.session.code() == "mine = 1")  # saved again

    drive(make_app(), scenario)


def test_result_tabs_have_keys(make_app) -> None:
    """Issue 22 #6: Output, Verdict, Diagnosis, Graph and Tutor had no keys."""

    async def scenario(app: TutorApp, pilot: Pilot[Any]) -> None:
        await go_to(app, pilot, "mini-basics", "first-backward")
        tabs = app.query_one("#result-tabs")
        editor = app.query_one("#editor", TextArea)
        editor.focus()
        before = editor.text
        for key, pane in [("alt+v", "tab-verdict"), ("alt+t", "tab-chat"),
                          ("alt+o", "tab-output"), ("alt+g", "tab-graph"),
                          ("alt+d", "tab-diagnosis")]:
            # As a terminal sends it: with the letter as its character, while in the editor.
            app.post_message(events.Key(key, key[-1]))
            await pilot.pause()
            await pilot.pause()
            assert tabs.active == pane, key
        assert editor.text == before  # the editor did not type the letters
        await go_to(app, pilot, "mini-basics", "intro")  # a reading step: the tutor only
        await pilot.press("alt+o")
        await pilot.pause()
        assert tabs.active == "tab-chat"

    drive(make_app(), scenario)


def test_give_up_key_shows_the_answer_on_quiz_steps_only(make_app) -> None:
    """Issue 21 section 3: a key that gives up on a quiz question and shows its answer; it
    is offered (footer, button) on quiz steps not passed yet, and nowhere else."""
    from textual.widgets import Button

    from tutor.tui.keys import keyed

    def offered(app: TutorApp) -> bool:
        return any(b.binding.action == keyed(app.lang, "give_up") and b.enabled
                   for b in app.screen.active_bindings.values())

    async def scenario(app: TutorApp, pilot: Pilot[Any]) -> None:
        assert not offered(app)  # a reading step
        await go_to(app, pilot, "mini-basics", "who-tracks")
        assert offered(app) and app.query_one("#btn-give-up", Button).display
        await pilot.press("alt+a")
        await wait_until(pilot, lambda: app.session.last_attempt is not None)
        await pilot.pause()
        verdict = app.query_one("#verdict").source  # type: ignore[attr-defined]
        assert "gave up" in verdict  # (the answer itself: see test_learning_session)
        assert app.main.results.active == "tab-verdict"
        assert "mini-basics/who-tracks" not in app.session.store.passed_steps()
        app.query_one("#quiz-choices", RadioSet).focus()
        await pilot.press("down", "enter", "ctrl+r")  # then right: nothing left to give up
        await wait_until(pilot, lambda: app.session.last_attempt.verdict.passed)
        await pilot.pause()
        assert not offered(app) and not app.query_one("#btn-give-up", Button).display

    drive(make_app(), scenario)


def test_alt_arrows_widen_and_narrow_the_lesson_text(make_app) -> None:
    """Issue 22 #7: panes should be resizable; alt+right / alt+left move the border between
    the lesson text and the work pane, within bounds."""

    async def scenario(app: TutorApp, pilot: Pilot[Any]) -> None:
        await go_to(app, pilot, "mini-basics", "first-backward")
        pane = app.query_one("#lesson-pane")
        start = pane.size.width
        await pilot.press("alt+right", "alt+right")
        await pilot.pause()
        wider = pane.size.width
        assert wider > start
        for _ in range(10):  # narrowed as far as it goes, and still there
            await pilot.press("alt+left")
        await pilot.pause()
        assert 0 < pane.size.width < start
        await go_to(app, pilot, "mini-basics", "grad-value")  # the share stays on other steps
        assert app.main.text_share == -3

    drive(make_app(), scenario, size=(120, 36))


def test_asking_the_tutor_from_the_palette_puts_the_cursor_in_the_chat(make_app) -> None:
    """The palette's "ask the tutor" on a code step: the chat tab shows, its box has focus."""

    async def scenario(app: TutorApp, pilot: Pilot[Any]) -> None:
        await go_to(app, pilot, "mini-basics", "first-backward")
        await app.action_focus_chat()
        await pilot.pause()
        assert app.main.results.active == "tab-chat"
        assert app.focused is app.query_one("#chat-input", Input)

    drive(make_app(), scenario)

"""Issue 22 #4 and #5: the device asked for is said on screen, and what the learner chose
(language, theme, device) is there again at the next start."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest
from test_app_pilot import drive, go_to, wait_until
from textual.pilot import Pilot
from tui_fakes import FakeRunner

from tutor.cli.app_cmd import app_choices
from tutor.settings import Settings, SettingsStore, load_settings, save_settings
from tutor.tui.app import TutorApp
from tutor.tui.device_notice import DeviceNotice, surely_missing
from tutor.tui.markdown_view import LessonBody


def notice_text(app: TutorApp) -> str:
    notice = app.query_one(DeviceNotice)
    return notice.message if notice.display else ""


def test_missing_cuda_is_said_on_the_screen_not_in_a_toast(make_app) -> None:
    """``tutor --device cuda`` without a GPU showed "device: cpu" and a 3 s toast."""

    async def scenario(app: TutorApp, pilot: Pilot[Any]) -> None:
        await wait_until(pilot, lambda: app.offered_devices is not None)
        await pilot.pause()
        text = notice_text(app)
        assert "cuda" in text and "cpu" in text and "not available" in text
        await pilot.pause(4)  # still there after a toast would have gone
        assert "not available" in notice_text(app)
        await go_to(app, pilot, "mini-basics", "first-backward")
        assert "not available" in notice_text(app)  # on every step until another is picked

    drive(make_app(device="cuda", runner=FakeRunner(devices=["cpu"])), scenario)


def test_device_can_be_switched_when_several_exist(make_app) -> None:
    async def scenario(app: TutorApp, pilot: Pilot[Any]) -> None:
        await wait_until(pilot, lambda: app.offered_devices is not None)
        assert app.session.device == "cpu"
        assert "cuda:0" in notice_text(app) or "cuda:1" in notice_text(app)
        await pilot.press("f6")
        await pilot.pause()
        assert app.session.device == "cuda:0"
        assert notice_text(app) == ""  # the learner picked one: nothing left to say

    drive(make_app(device="mps", runner=FakeRunner(devices=["cpu", "cuda:0"])), scenario)


def test_surely_missing_needs_no_torch() -> None:
    assert not surely_missing("cpu")
    if not Path("/dev/nvidia0").exists():
        assert surely_missing("cuda") == Path("/proc").exists()


def test_settings_round_trip_and_bad_files(tmp_path: Path) -> None:
    path = tmp_path / "d" / "settings.json"
    assert load_settings(path) == Settings()
    save_settings(path, Settings(lang="zh", theme="nord", device="cuda:0"))
    assert load_settings(path) == Settings(lang="zh", theme="nord", device="cuda:0")
    path.write_text('{"lang": "fr", "theme": 3, "other": "x"}')
    assert load_settings(path) == Settings()
    path.write_text("not json")
    assert load_settings(path) == Settings()


def test_command_line_wins_over_what_was_remembered() -> None:
    saved = Settings(lang="zh", device="cuda")
    assert app_choices(argparse.Namespace(lang=None, device=None), saved) == ("zh", "cuda")
    assert app_choices(argparse.Namespace(lang="en", device="cpu"), saved) == ("en", "cpu")


def test_language_theme_and_device_are_remembered(make_app, tmp_path: Path) -> None:
    """ctrl+l, the theme and the device picked were forgotten at the next start."""
    settings = SettingsStore(tmp_path / "settings.json")

    async def scenario(app: TutorApp, pilot: Pilot[Any]) -> None:
        await wait_until(pilot, lambda: app.offered_devices is not None)
        await pilot.press("ctrl+l")
        await pilot.pause()
        app.theme = "nord"
        app.select_device("cuda:0")
        await pilot.pause()

    drive(make_app(settings=settings, runner=FakeRunner(devices=["cpu", "cuda:0"])), scenario)
    saved = json.loads((tmp_path / "settings.json").read_text())
    assert saved == {"lang": "zh", "theme": "nord", "device": "cuda:0"}

    again = SettingsStore(tmp_path / "settings.json")

    async def second(app: TutorApp, pilot: Pilot[Any]) -> None:
        assert app.theme == "nord"

    drive(make_app(settings=again, lang=again.current.lang), second)


def test_tutor_pane_follows_ctrl_l_on_a_reading_step(make_app) -> None:
    """After ctrl+l on a reading step the Tutor pane kept its English welcome."""

    async def scenario(app: TutorApp, pilot: Pilot[Any]) -> None:
        def welcome() -> str:
            return next(iter(app.query("#chat-log LessonBody").results(LessonBody))).source

        english = welcome()
        assert english.startswith("**Tutor**")
        await pilot.press("ctrl+l")
        await pilot.pause()
        assert welcome().startswith("**导师**") and welcome() != english

    drive(make_app(), scenario)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.skipif(
    int(__import__("importlib.metadata").metadata.version("textual").split(".")[0]) < 8,
    reason="Textual before 8 names its built-in palette entries otherwise")
def test_palette_builtin_entries_speak_the_language(make_app, lang: str) -> None:
    """The palette's Theme/Quit/Keys/Screenshot stayed English in zh."""

    async def scenario(app: TutorApp, pilot: Pilot[Any]) -> None:
        titles = [command.title for command in app.get_system_commands(app.screen)]
        if lang == "zh":
            assert {"主题", "退出", "截图"} <= set(titles)
            assert "Theme" not in titles and "Quit" not in titles
        else:
            assert {"Theme", "Quit", "Screenshot"} <= set(titles)

    drive(make_app(lang=lang), scenario)

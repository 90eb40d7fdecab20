"""``tutor`` (no subcommand) start-up pieces that need no screen."""

from __future__ import annotations

import argparse
import copy
from pathlib import Path

import pytest

from tutor.cli.app_cmd import OnFirstUse, lazy_tutor
from tutor.course import load_course

MINI = Path(__file__).resolve().parents[1] / "fixtures" / "mini_course"


def test_lazy_tutor_builds_on_first_question(monkeypatch) -> None:
    built: list[object] = []

    class Recorder:
        @classmethod
        def from_environment(cls, course, **options):
            built.append((course, options))
            return cls()

        def ask(self, question, **kwargs):
            return f"answer to {question}"

    import tutor.chat

    monkeypatch.setattr(tutor.chat, "Tutor", Recorder)
    course = load_course(MINI)
    sandbox = object()
    lazy = lazy_tutor(course, sandbox)
    assert built == []
    assert lazy.ask("why", lang="en") == "answer to why"
    assert lazy.ask("again", lang="en") == "answer to again"
    # the tutor runs a pasted snippet in the app's own sandbox
    assert built == [(course, {"runner": sandbox})]


def test_protocol_probes_build_nothing() -> None:
    built: list[bool] = []
    lazy = OnFirstUse(lambda: built.append(True) or "built")
    copy.copy(lazy)
    assert not hasattr(lazy, "__len__")
    assert built == [] and not lazy.built
    assert lazy.upper() == "BUILT"
    assert built == [True] and lazy.built


@pytest.mark.parametrize("used", [False, True])
def test_sandbox_built_on_first_use_and_closed_only_then(monkeypatch, tmp_path, used) -> None:
    """The app's sandbox is built when the app first uses it (after the first screen), and
    closed at the end only if it was."""
    import tutor.sandbox
    import tutor.tui.app
    from tutor.cli import app_cmd

    events: list[str] = []

    class FakeSandbox:
        def __init__(self, *, hide: object) -> None:
            events.append("built")

        def devices(self) -> list[str]:
            return ["cpu"]

        def close(self) -> None:
            events.append("closed")

    class FakeApp:
        return_code = 0

        def __init__(self, runner: object) -> None:
            self.runner = runner

        def run(self) -> None:
            events.append("running")
            if used:
                assert self.runner.devices() == ["cpu"]

    monkeypatch.setattr(tutor.tui.app, "TutorApp", lambda session, **_: FakeApp(session.runner))
    monkeypatch.setattr(tutor.sandbox, "Sandbox", FakeSandbox)
    args = argparse.Namespace(lessons=MINI, data_dir=tmp_path, lang="en", device="cpu")
    assert app_cmd.run(args) == 0
    assert events == (["running", "built", "closed"] if used else ["running"])

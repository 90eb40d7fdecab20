"""Issue 22 #10: output shown while a run is going, from a runner that streams it (the
sandbox's ``on_output``), and only the learner's own run's."""

from __future__ import annotations

import threading
from typing import Any

from test_app_pilot import drive, go_to, wait_until
from textual.pilot import Pilot
from textual.widgets import Static, TextArea
from tui_fakes import FakeRunner

from tutor.learning import CancellableRunner
from tutor.tui.app import TutorApp


class StreamingFake(FakeRunner):
    """Streams "tick N" lines, then waits until told to finish."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.streamed: list[str] = []

    def run(self, code: str, *, on_output=None, **kwargs: Any):  # type: ignore[override]
        if on_output is not None:
            self.streamed.append(code)
            for n in range(3):
                on_output(f"tick {n}\n")
            self.release.wait(10)
        return super().run(code, **kwargs)


def test_output_shows_while_the_run_goes_on(make_app) -> None:
    runner = StreamingFake()

    def output(app: TutorApp) -> str:
        return str(app.query_one("#output", Static).render()) if app.query("#output") else ""

    async def scenario(app: TutorApp, pilot: Pilot[Any]) -> None:
        await go_to(app, pilot, "mini-basics", "first-backward")
        code = app.query_one("#editor", TextArea).text
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: "tick 2" in output(app))
        assert app.running  # still going: shown as it came
        assert app.main.results.active == "tab-output"
        runner.release.set()
        await wait_until(pilot, lambda: not app.running)
        assert "running" not in output(app).lower()
        assert runner.streamed == [code]  # the learner's run only

    drive(make_app(runner=runner), scenario)


class Recorder:
    def __init__(self) -> None:
        self.listened: list[str] = []

    def run(self, code: str, *, on_output=None, **kwargs: Any) -> str:
        if on_output:
            on_output(code)
            self.listened.append(code)
        return code


def test_only_the_learners_first_run_streams() -> None:
    seen: list[str] = []
    inner = Recorder()
    runner = CancellableRunner(inner, threading.Event(), learner_code="learner",  # type: ignore[arg-type]
                               on_output=seen.append)
    runner.run("reference solution")  # grading's run of the reference: never shown
    runner.run("learner")
    runner.run("learner")  # a second run of the same code (hidden inputs): not shown
    assert seen == ["learner"] and inner.listened == ["learner"]


def test_a_runner_without_on_output_is_used_as_before() -> None:
    class Old:
        def run(self, code: str, **kwargs: Any) -> dict[str, Any]:
            return kwargs

    runner = CancellableRunner(Old(), threading.Event(), learner_code="c",  # type: ignore[arg-type]
                               on_output=print)
    assert "on_output" not in runner.run("c", device="cpu")

"""The app on a CUDA machine: ``--device auto`` picks the GPU once the sandbox has listed
it, runs go there, and the learner can switch back to the CPU. Skipped without CUDA."""

from __future__ import annotations

import asyncio

import pytest
from pilot_helpers import wait_until
from textual.widgets import Select, TextArea
from tui_fakes import create_app

from tutor.sandbox import Sandbox


def _cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


pytestmark = [
    pytest.mark.cuda,
    pytest.mark.slow,
    pytest.mark.skipif(not _cuda_available(), reason="needs a CUDA device"),
]


def test_auto_device_runs_on_the_gpu_and_back(course, store, sandbox: Sandbox) -> None:
    app = create_app(course=course, runner=sandbox, store=store, device="auto")

    async def main() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_until(pilot, lambda: app.offered_devices is not None, 120)
            await pilot.pause()
            assert "cuda:0" in app.session.known_devices
            assert app.session.device == "cuda:0"
            await app.goto("mini-basics", "first-backward")
            assert app.query_one("#device", Select).value == "cuda:0"
            editor = app.query_one("#editor", TextArea)
            editor.text = app.session.step.solution  # type: ignore[union-attr]
            await pilot.press("ctrl+r")
            await wait_until(pilot, lambda: app.session.last_attempt is not None, 120)
            await wait_until(pilot, lambda: not app.running, 120)
            attempt = app.session.last_attempt
            assert attempt.run is not None and attempt.run.device == "cuda:0"
            assert attempt.verdict.passed, attempt.verdict
            app.select_device("cpu")
            await pilot.press("ctrl+r")
            await wait_until(pilot, lambda: app.session.last_attempt is not attempt, 120)
            await wait_until(pilot, lambda: not app.running, 120)
            assert app.session.last_attempt.run.device == "cpu"

    asyncio.run(main())

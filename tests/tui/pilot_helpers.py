"""Driving the app in Pilot tests: a scenario on a running app, and waiting for workers."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from textual.pilot import Pilot

from tutor.tui.app import TutorApp

Scenario = Callable[[TutorApp, Pilot[Any]], Awaitable[None]]


def drive(app: TutorApp, scenario: Scenario, size: tuple[int, int] = (120, 40)) -> None:
    """Run ``scenario`` on ``app`` once its first screen is up."""

    async def main() -> None:
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            await scenario(app, pilot)

    asyncio.run(main())


async def wait_until(pilot: Pilot[Any], condition: Callable[[], bool], timeout: float = 5) -> None:
    """Let workers finish: poll the condition while the app processes messages."""
    for _ in range(int(timeout / 0.02)):
        if condition():
            return
        await pilot.pause(0.02)
    raise AssertionError("condition not reached in time")

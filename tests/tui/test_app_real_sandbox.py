"""The app over the real sandbox, grading and diagnosis, where torch is the point: a run
that fails is diagnosed, the fix passes, the graph is torch's, and cancel kills a hanging
run in its process."""

from __future__ import annotations

import asyncio

import pytest
from pilot_helpers import wait_until
from textual.widgets import TextArea, Tree
from tui_fakes import create_app

from tutor.sandbox import Sandbox
from tutor.tui.app import TutorApp
from tutor.tui.markdown_view import MarkdownView
from tutor.tui.result_tabs import ResultTabs

pytestmark = pytest.mark.slow


def test_fix_step_with_real_torch(course, store, sandbox: Sandbox) -> None:
    app = create_app(course=course, runner=sandbox, store=store, lang="en")

    async def main() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_until(pilot, lambda: app.offered_devices is not None, 120)
            await app.goto("mini-graph", "fix-scalar")
            await pilot.pause()
            editor = app.query_one("#editor", TextArea)
            await pilot.press("ctrl+r")  # the starter: backward on a non-scalar
            await wait_until(pilot, lambda: app.session.last_attempt is not None, 120)
            await wait_until(pilot, lambda: not app.running, 120)
            attempt = app.session.last_attempt
            assert attempt is not None and attempt.run is not None
            assert attempt.run.error is not None
            assert "scalar outputs" in attempt.run.error.message
            assert attempt.diagnoses, "the real diagnosis explains the error"
            diagnosis = app.query_one("#diagnosis", MarkdownView).source
            assert attempt.diagnoses[0].title.en in diagnosis

            editor.text = editor.text.replace("z.backward()", "z.sum().backward()")
            await pilot.press("ctrl+r")
            await wait_until(
                pilot,
                lambda: not app.running and app.session.last_attempt.verdict.passed,
                120,
            )
            assert "mini-graph/fix-scalar" in store.passed_steps()

            await app.query_one(ResultTabs).activate("tab-graph")
            app.query_one("#graph-expr").value = "z"
            app.action_draw_graph()
            await wait_until(pilot, lambda: app.graph_view is not None and not app.running, 120)
            tree: Tree[None] = app.query_one("#graph-tree", Tree)
            assert str(tree.root.children[0].label) == "AddBackward0"
            leaf = tree.root.children[0].children[0]
            assert "AccumulateGrad" in str(leaf.label) and "leaf x (2,)" in str(leaf.label)

            # What the run prints shows while it runs (the sandbox streams it).
            editor.text = "import time\nprint('first line', flush=True)\ntime.sleep(3)\n"
            await pilot.press("ctrl+r")
            await wait_until(pilot, lambda: "first line" in (
                app.main.results.live_output or ""), 60)
            assert app.running
            await wait_until(pilot, lambda: not app.running, 60)

            editor.text = "while True:\n    pass\n"
            await pilot.press("ctrl+r")
            await wait_until(pilot, lambda: app.running, 10)
            await pilot.pause(0.5)
            await pilot.press("ctrl+g")
            await wait_until(pilot, lambda: not app.running, 60)
            cancelled = app.session.last_attempt
            assert cancelled is not None and cancelled.cancelled
            assert cancelled.run is not None and cancelled.run.error.type == "Cancelled"

    asyncio.run(main())
    assert isinstance(app, TutorApp)

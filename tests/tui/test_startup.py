"""Start-up work the first screen does not need is skipped or deferred (issue 7)."""

from __future__ import annotations

import argparse
import asyncio
import gc
from pathlib import Path
from typing import Any

import pytest
from textual.document._syntax_aware_document import SyntaxAwareDocument

from tutor.tui.app import TutorApp
from tutor.tui.code_editor import CodeEditor

MINI = Path(__file__).resolve().parents[1] / "fixtures" / "mini_course"


def test_editor_compiles_its_highlight_query_once(make_app, monkeypatch) -> None:
    calls: list[str] = []
    real = SyntaxAwareDocument.prepare_query

    def counting(self: SyntaxAwareDocument, query: str) -> Any:
        calls.append(query)
        return real(self, query)

    monkeypatch.setattr(SyntaxAwareDocument, "prepare_query", counting)
    app = make_app()

    async def main() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            app.session.goto("mini-basics", "first-backward")  # the editor is built here
            await app.render_all(new_step=True)
            await pilot.pause()
            editor = app.query_one("#editor", CodeEditor)
            assert len(calls) == 1
            assert isinstance(editor.document, SyntaxAwareDocument)
            # A real language change still rebuilds the document.
            editor.language = None
            await pilot.pause()
            assert not isinstance(editor.document, SyntaxAwareDocument)
            editor.language = "python"
            await pilot.pause()
            assert isinstance(editor.document, SyntaxAwareDocument)
            assert len(calls) == 2

    asyncio.run(main())


def test_collector_back_on_once_the_first_screen_is_drawn(make_app) -> None:
    app: TutorApp = make_app()
    seen: list[bool] = []

    async def main() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            await pilot.pause()
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
    import tutor.sandbox
    import tutor.tui.app
    from tutor.cli import app_cmd

    during: list[bool] = []

    class FakeApp:
        return_code = 0

        def run(self) -> None:
            during.append(gc.isenabled())
            if fails:
                raise RuntimeError("boom")

    class FakeSandbox:
        def close(self) -> None:
            pass

    monkeypatch.setattr(tutor.tui.app, "create_app", lambda **kwargs: FakeApp())
    monkeypatch.setattr(tutor.sandbox, "Sandbox", FakeSandbox)
    args = argparse.Namespace(lessons=MINI, data_dir=tmp_path, lang="en", device="cpu")
    assert gc.isenabled()
    if fails:
        with pytest.raises(RuntimeError):
            app_cmd.run(args)
    else:
        assert app_cmd.run(args) == 0
    assert during == [False]
    assert gc.isenabled()

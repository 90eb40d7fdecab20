"""The TUI puts the editor's cursor on the root-cause line and shows the chain of evidence."""

from __future__ import annotations

import asyncio

from textual.app import App, ComposeResult
from textual.widgets import TextArea

from tutor.diagnosis.models import Diagnosis
from tutor.i18n import T
from tutor.tui.root_cause import evidence_markdown, root_cause_line, show_root_cause

DIAG = Diagnosis(id="no-grad-fn-detached", severity="error", title=T("t", "t"),
                 explanation=T("e", "e"), fix=T("f", "f"), line=4, root_line=2,
                 chain=[T("backward() on line 4 failed", "第 4 行的 backward() 失败"),
                        T("line 2 detached it", "第 2 行截断了它")],
                 fix_verified=True, fix_check=T("it runs", "能运行"))


class Editor(App[None]):
    def compose(self) -> ComposeResult:
        yield TextArea("import torch\n    h = w.detach()\ny = h * 2\ny.backward()\n")


def test_cursor_moves_to_the_root_cause_line_not_the_failing_one() -> None:
    async def scenario() -> None:
        app = Editor()
        async with app.run_test() as pilot:
            editor = app.query_one(TextArea)
            assert show_root_cause(editor, [DIAG]) == 2
            await pilot.pause()
            assert editor.cursor_location == (1, len("    h = w.detach()"))
            assert editor.selected_text == "h = w.detach()"
            assert show_root_cause(editor, []) is None

    asyncio.run(scenario())


def test_evidence_markdown_lists_the_chain_in_both_languages() -> None:
    assert root_cause_line([DIAG]) == 2
    en, zh = evidence_markdown(DIAG, "en"), evidence_markdown(DIAG, "zh")
    assert "Root cause: line 2" in en and "1. backward() on line 4 failed" in en
    assert "根本原因：第 2 行" in zh and "2. 第 2 行截断了它" in zh and "能运行" in zh

"""`tutor serve` end to end: the app in real headless Chromium, one learner after another.

Skipped where no Chromium is installed (CI: `apt-get install -y chromium`, and the dev extra's
playwright and pyte)."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest
from browser import (
    CAPTURE,
    CHROMIUM_ARGS,
    chromium_missing,
    chromium_path,
    free_port,
    screen_text,
    start_server,
    wait_for_text,
)

pytestmark = [pytest.mark.slow, pytest.mark.skipif(chromium_missing() is not None,
                                                   reason=chromium_missing() or "")]

FIRST_LESSON = "Tensors that track history"
ANSWER = "\nx = torch.ones(2, 2, requires_grad=True)\ns = (x * y).sum()\ns.backward()\n"


def test_a_learner_names_themself_runs_code_and_reads_the_verdict(tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    users = tmp_path / "users"
    port = free_port()
    server = start_server(users, port)
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium_path(),
                                                 args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.add_init_script(CAPTURE)
            bad = page.goto(f"http://127.0.0.1:{port}/?user=../etc")
            assert bad is not None and bad.status == 400  # a name is a folder: no paths
            page.goto(f"http://127.0.0.1:{port}/")
            page.fill("#user", "alice")
            page.click("button")
            assert page.url.endswith("/u/alice")
            first = wait_for_text(page, FIRST_LESSON, 120)
            assert "Step 1/6 · Reading" in first and re.search(r"0/\d+ done", first)

            page.focus("textarea.xterm-helper-textarea")
            for _ in range(3):  # two answer steps, then the first code exercise
                page.keyboard.press("Control+n")
                time.sleep(0.5)
            wait_for_text(page, "Step 4/6 · Code exercise", 30)
            page.keyboard.press("PageDown")
            page.keyboard.press("End")
            page.keyboard.type(ANSWER, delay=10)
            wait_for_text(page, "s.backward()", 15)
            page.keyboard.press("Control+r")
            verdict = wait_for_text(page, "All checks pass.", 120)
            assert "✓ Passed · score 5/5" in verdict
            assert re.search(r"1/\d+ done", verdict)
            shot = Path(os.environ.get("TUTOR_SCREENSHOT_DIR", tmp_path)) / "serve-verdict.png"
            shot.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(shot))

            # another learner, by URL, in their own process: their own progress
            other = browser.new_page(viewport={"width": 1400, "height": 900})
            other.add_init_script(CAPTURE)
            other.goto(f"http://127.0.0.1:{port}/u/bob")
            assert re.search(r"0/\d+ done", wait_for_text(other, FIRST_LESSON, 120))
            assert re.search(r"1/\d+ done", screen_text(page))
            # bob's code goes through the same policy and sandbox as in the terminal: reading
            # alice's progress is refused
            alice = next(p for p in (users / "alice").iterdir() if p.is_file())
            other.focus("textarea.xterm-helper-textarea")
            for _ in range(3):
                other.keyboard.press("Control+n")
                time.sleep(0.5)
            wait_for_text(other, "Step 4/6 · Code exercise", 30)
            other.keyboard.press("PageDown")
            other.keyboard.press("End")
            other.keyboard.type(f"\nprint(open({str(alice)!r}).read())\n", delay=10)
            other.keyboard.press("Control+r")
            refused = wait_for_text(other, "line 8 uses open", 120)
            assert "score 0/5" in refused and re.search(r"0/\d+ done", refused)
            browser.close()
    finally:
        server.terminate()
        server.wait(30)
    assert sorted(p.name for p in users.iterdir()) == ["alice", "bob"]
    assert any((users / "alice").iterdir()) and any((users / "bob").iterdir())

"""`tutor watch` reacting to real file events (watchfiles): plain saves, saves by rename,
vim's backup-and-write, bursts of writes, and writes that change nothing.

Waits are for an event to arrive (up to a generous deadline), never assertions on time.
"""

from __future__ import annotations

import os
import queue
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from watch_fakes import FIRST, FIX, FakeGrading, save

from tutor.cli.watch_cmd import (
    FilesChanged,
    FileWatcher,
    KeyPressed,
    WatcherFailed,
    WatchSession,
    run_loop,
)
from tutor.progress import ProgressStore
from tutor.workspace import HEADER_END, Workspace

DEADLINE_S = 30.0


@pytest.fixture
def watcher(workspace: Workspace) -> Iterator[tuple[FileWatcher, queue.Queue]]:
    events: queue.Queue = queue.Queue()
    w = FileWatcher(workspace.root, events)
    w.start()
    assert w.ready.wait(DEADLINE_S), "the watcher never came up"
    yield w, events
    w.close()


def paths_until(events: queue.Queue, wanted: Path) -> set[str]:
    """Every path reported until one batch names ``wanted``."""
    seen: set[str] = set()
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        try:
            event = events.get(timeout=0.5)
        except queue.Empty:
            continue
        assert isinstance(event, FilesChanged), event
        seen |= event.paths
        if str(wanted) in event.paths:
            return seen
    raise AssertionError(f"{wanted} was never reported; saw {sorted(seen)}")


def body_of(path: Path, body: str) -> str:
    header = path.read_text(encoding="utf-8").partition(HEADER_END + "\n")[0]
    return header + HEADER_END + "\n" + body


def test_a_plain_write_is_reported(watcher, workspace: Workspace) -> None:
    _, events = watcher
    path = save(workspace, FIRST, "import torch\n")
    paths_until(events, path)


def test_a_save_by_rename_is_reported_under_the_exercise_name(watcher, workspace) -> None:
    # VS Code, JetBrains, many others: write a temporary file, rename it over the original
    _, events = watcher
    path = workspace.root / "01-mini-basics/02-first-backward.py"
    tmp = path.with_name(".02-first-backward.py.tmp123")
    tmp.write_text(body_of(path, "import torch\n"), encoding="utf-8")
    os.replace(tmp, path)
    paths_until(events, path)


def test_vims_backup_then_write_is_reported(watcher, workspace) -> None:
    # vim with `backupcopy=no`: the original is renamed to a backup, a new file is written
    _, events = watcher
    path = workspace.root / "02-mini-graph/01-fix-scalar.py"
    text = body_of(path, "import torch\n")
    backup = path.with_name(path.name + "~")
    os.rename(path, backup)
    path.write_text(text, encoding="utf-8")
    backup.unlink()
    paths_until(events, path)


def test_a_folder_that_goes_away_stops_the_watch_with_a_reason(tmp_path: Path) -> None:
    events: queue.Queue = queue.Queue()
    w = FileWatcher(tmp_path / "never-made", events)
    w.start()
    try:
        event = events.get(timeout=DEADLINE_S)
    finally:
        w.close()
    assert isinstance(event, WatcherFailed) and event.error


@pytest.fixture
def watching(
    make_session: Callable[..., WatchSession], workspace: Workspace
) -> Iterator[queue.Queue]:
    """The whole loop as `tutor watch` runs it, minus the keyboard: keys go in the queue."""
    session = make_session()
    events: queue.Queue = queue.Queue()
    w = FileWatcher(workspace.root, events)
    w.start()
    assert w.ready.wait(DEADLINE_S)
    loop = threading.Thread(target=run_loop, args=(session, events), daemon=True)
    loop.start()
    yield events
    events.put(KeyPressed("q"))
    loop.join(timeout=DEADLINE_S)
    w.close()
    assert not loop.is_alive(), "q ends the loop"


def wait_for(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not condition():
        assert time.monotonic() < deadline, f"never happened: {what}"
        time.sleep(0.02)


def test_each_save_is_graded_and_a_touch_is_not(
    watching, workspace: Workspace, store: ProgressStore, fake_grading: FakeGrading, mini_course
) -> None:
    path = save(workspace, FIRST, "import torch\n")
    wait_for(lambda: store.attempts(FIRST) == 1, "the first save graded")
    later = time.time() + 5
    os.utime(path, (later, later))  # a touch: an event, but the text is the same
    # a save of another exercise after the touch: once it is graded the touch was handled
    save(workspace, FIX, "import torch\nx = 2\n")
    wait_for(lambda: store.attempts(FIX) == 1, "the other exercise graded")
    assert store.attempts(FIRST) == 1, "a touch is not graded again"
    assert [ref for ref, _ in fake_grading.calls] == [FIRST, FIX]

    tmp = path.with_name("save.tmp")
    tmp.write_text(body_of(path, mini_course.find(FIRST)[1].solution), encoding="utf-8")
    os.replace(tmp, path)  # a save by rename
    wait_for(lambda: FIRST in store.passed_steps(), "the renamed save graded")
    assert store.last_code(FIRST) == mini_course.find(FIRST)[1].solution


def test_a_burst_of_writes_ends_graded_on_the_last_text(
    watching, workspace: Workspace, store: ProgressStore, fake_grading: FakeGrading, mini_course
) -> None:
    solution = mini_course.find(FIRST)[1].solution
    for i in range(5):  # an editor writing a file in pieces, or the learner saving fast
        save(workspace, FIRST, f"import torch\nstep = {i}\n")
    save(workspace, FIRST, solution)
    wait_for(lambda: FIRST in store.passed_steps(), "the last text graded")
    assert fake_grading.calls[-1][1].endswith(solution)
    assert store.last_code(FIRST) == solution

"""The progress store: round trip, restart, kill -9 mid-write, concurrent writers."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from tutor.progress import _SCHEMA_V1, SCHEMA_VERSION, ProgressError, ProgressStore, StepProgress

REF = "requires-grad/make-leaf"


@pytest.fixture
def store(tmp_path: Path) -> ProgressStore:
    s = ProgressStore(tmp_path / "progress.sqlite3")
    yield s
    s.close()


def test_fresh_store_is_empty(store: ProgressStore) -> None:
    assert store.passed_steps() == set()
    assert store.attempts(REF) == 0
    assert store.last_code(REF) is None
    assert store.hints_revealed(REF) == 0
    assert store.position() is None
    assert store.step(REF) == StepProgress(step_ref=REF)


def test_round_trip(store: ProgressStore) -> None:
    store.record_attempt(REF, "x = 1", passed=False, score=0, max_score=3)
    store.record_attempt(REF, "x = 2", passed=True, score=3, max_score=3)
    store.record_attempt(REF, "x = 3", passed=False, score=1, max_score=3)
    store.save_code("graph/intro", "y = 5")
    store.set_hints_revealed(REF, 2)
    store.set_position("requires-grad", "make-leaf")

    assert store.attempts(REF) == 3
    assert store.passed_steps() == {REF}, "a pass stays a pass after a later failing attempt"
    assert store.last_code(REF) == "x = 3"
    assert store.last_code("graph/intro") == "y = 5"
    assert store.attempts("graph/intro") == 0, "saving code is not an attempt"
    assert store.hints_revealed(REF) == 2
    assert store.position() == ("requires-grad", "make-leaf")
    step = store.step(REF)
    assert (step.best_score, step.max_score, step.passed) == (3.0, 3.0, True)


def test_restart_restores_everything(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "dir" / "progress.sqlite3"
    with ProgressStore(path) as first:
        first.record_attempt(REF, "print('hi')", passed=True, score=1, max_score=1)
        first.set_hints_revealed(REF, 1)
        first.set_position("graph", "intro")
    with ProgressStore(path) as second:
        assert second.passed_steps() == {REF}
        assert second.attempts(REF) == 1
        assert second.last_code(REF) == "print('hi')"
        assert second.hints_revealed(REF) == 1
        assert second.position() == ("graph", "intro")


def test_default_uses_data_dir(tmp_path: Path) -> None:
    with ProgressStore.default(tmp_path) as s:
        s.save_code(REF, "a")
    assert (tmp_path / "progress.sqlite3").is_file()


def test_wal_and_schema_version(store: ProgressStore) -> None:
    conn = sqlite3.connect(store.path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    finally:
        conn.close()


def test_newer_schema_is_refused_with_a_clear_message(tmp_path: Path) -> None:
    path = tmp_path / "progress.sqlite3"
    ProgressStore(path).close()
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.commit()
    conn.close()
    with pytest.raises(ProgressError, match="newer autograd-tutor"):
        ProgressStore(path)


def test_garbage_file_gives_a_clear_error_and_is_not_touched(tmp_path: Path) -> None:
    path = tmp_path / "progress.sqlite3"
    junk = b"this is not a database" * 100
    path.write_bytes(junk)
    with pytest.raises(ProgressError, match="cannot open the progress file") as caught:
        ProgressStore(path)
    assert path.read_bytes() == junk
    said = caught.value.message_in("zh")
    assert said.startswith("无法打开进度文件：进度文件 ") and "已损坏" in said
    assert (caught.value.hint_in("zh") or "").startswith("把这个文件移到别处即可重新开始")


def test_bad_step_ref_is_a_programming_error(store: ProgressStore) -> None:
    with pytest.raises(ValueError, match="LESSON/STEP"):
        store.record_attempt("no-slash", "", passed=True, score=1, max_score=1)


def _python(code: str) -> list[str]:
    return [sys.executable, "-c", textwrap.dedent(code)]


WRITER = """
    import sys
    from tutor.progress import ProgressStore
    store = ProgressStore(sys.argv[1])
    ref, count = sys.argv[2], int(sys.argv[3])
    i = 0
    while count < 0 or i < count:
        store.record_attempt(ref, "x = %d\\n" % i + "#" * 20000, passed=i % 7 == 0,
                             score=i % 3, max_score=3)
        store.set_position("lesson", "step-%d" % i)
        i += 1
    store.close()
"""


def test_kill_9_mid_write_leaves_a_readable_consistent_store(tmp_path: Path) -> None:
    path = tmp_path / "progress.sqlite3"
    ProgressStore(path).close()
    proc = subprocess.Popen([*_python(WRITER), str(path), REF, "-1"])
    try:
        with ProgressStore(path) as watcher:
            deadline = time.monotonic() + 60
            while watcher.attempts(REF) < 30:
                assert proc.poll() is None, "writer died on its own"
                assert time.monotonic() < deadline, "writer made no progress"
                time.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()
    assert proc.returncode == -signal.SIGKILL

    with ProgressStore(path) as after:
        conn = sqlite3.connect(path)
        try:
            assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        finally:
            conn.close()
        n = after.attempts(REF)
        assert n >= 30
        # counter and log are written in one transaction: never one without the other
        assert after.attempt_count_logged(REF) == n
        assert after.last_code(REF).startswith(f"x = {n - 1}\n")
        lesson, step = after.position()
        assert lesson == "lesson" and step.startswith("step-")
        # and it still takes writes
        after.record_attempt(REF, "y", passed=True, score=3, max_score=3)
        assert after.attempts(REF) == n + 1


def test_two_processes_writing_at_once_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "progress.sqlite3"
    procs = [
        subprocess.Popen([*_python(WRITER), str(path), REF, "40"]) for _ in range(2)
    ]
    for proc in procs:
        assert proc.wait(timeout=120) == 0
    with ProgressStore(path) as s:
        assert s.attempts(REF) == 80
        assert s.attempt_count_logged(REF) == 80
        assert s.passed_steps() == {REF}


def test_threads_sharing_one_store(store: ProgressStore) -> None:
    def work(k: int) -> None:
        for i in range(25):
            store.record_attempt(f"l/s{k}", f"{i}", passed=False, score=0, max_score=1)
            store.attempts(f"l/s{k}")

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [store.attempts(f"l/s{k}") for k in range(4)] == [25] * 4


# --------------------------------------------------------------------------- bad files


def test_a_corrupted_file_is_a_clear_error_and_left_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "progress.sqlite3"
    garbage = b"this is not a database\x00" * 300
    path.write_bytes(garbage)
    with pytest.raises(ProgressError, match="damaged") as caught:
        ProgressStore(path)
    assert "move the file aside" in str(caught.value.hint)
    assert path.read_bytes() == garbage


def test_damage_inside_a_valid_file_is_a_clear_error_on_use(tmp_path: Path) -> None:
    path = tmp_path / "progress.sqlite3"
    with ProgressStore(path) as s:
        for i in range(200):
            s.record_attempt(REF, "x = 1  # " + "pad" * 100 + str(i), passed=False, score=0,
                             max_score=1)
    data = bytearray(path.read_bytes())
    page = 4096
    for offset in range(2 * page, len(data), page):  # every page after the schema's
        data[offset:offset + 64] = b"\xff" * 64
    path.write_bytes(bytes(data))
    before = path.read_bytes()
    with pytest.raises(ProgressError, match=r"damaged|cannot"), ProgressStore(path) as s:
        s.record_attempt(REF, "y", passed=True, score=1, max_score=1)
        s.attempt_count_logged(REF)
        s.step(REF)
    assert path.read_bytes() == before


def test_a_locked_file_is_a_clear_error_and_nothing_is_lost(tmp_path: Path) -> None:
    path = tmp_path / "progress.sqlite3"
    with ProgressStore(path) as s:
        s.record_attempt(REF, "x = 1", passed=False, score=0, max_score=1)
    other = sqlite3.connect(path, isolation_level=None)
    with ProgressStore(path, busy_timeout_s=0.2) as store:
        other.execute("BEGIN EXCLUSIVE")
        try:
            with pytest.raises(ProgressError, match="locked by another program"):
                store.record_attempt(REF, "x = 2", passed=True, score=1, max_score=1)
        finally:
            other.execute("ROLLBACK")
        assert store.attempts(REF) == 1 and store.passed_steps() == set()
    other.close()


def test_a_full_disk_is_a_clear_error_and_the_file_is_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "progress.sqlite3"
    with ProgressStore(path) as s:
        s.record_attempt(REF, "x = 1", passed=False, score=0, max_score=1)
        pages = s._conn.execute("PRAGMA page_count").fetchone()[0]
        # SQLite's own "disk full": no page may be added beyond those the file has
        s._conn.execute(f"PRAGMA max_page_count = {pages}")
        with pytest.raises(ProgressError, match="full"):
            s.record_attempt(REF, "y" * 200_000, passed=True, score=1, max_score=1)
        assert s.attempts(REF) == 1 and s.last_code(REF) == "x = 1"
    with ProgressStore(path) as s:
        assert s.attempts(REF) == 1 and s.passed_steps() == set()


def test_switching_to_wal_waits_for_another_process_opening_the_file(tmp_path: Path) -> None:
    """The flaky two-writers test: PRAGMA journal_mode = WAL got 'database is locked' at
    once, without the busy wait, while the other process held the file a moment."""
    path = tmp_path / "progress.sqlite3"
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.executescript(_SCHEMA_V1 + f"; PRAGMA user_version = {SCHEMA_VERSION};")
    other.execute("BEGIN IMMEDIATE")  # as the other process's first write does
    other.execute("INSERT INTO meta VALUES ('k', 'v')")
    release = threading.Timer(0.3, lambda: other.execute("ROLLBACK"))
    release.start()
    try:
        with ProgressStore(path, busy_timeout_s=10) as s:
            s.record_attempt(REF, "x", passed=True, score=1, max_score=1)
            assert s.attempts(REF) == 1
    finally:
        release.join()
        other.close()

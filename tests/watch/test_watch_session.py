"""`tutor watch` presented over the learning session, driven through real file writes and
keys without a terminal (fake grading)."""

from __future__ import annotations

import io
import os
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from watch_fakes import FILES, FIRST, FIX, QUIZ, FakeGrading, save

from tutor.cli.watch_cmd import FilesChanged, KeyPressed, KeyReader, WatchSession, run_loop
from tutor.course.models import Course
from tutor.progress import ProgressStore
from tutor.workspace import HEADER_END, Workspace, split_code


def test_begin_shows_the_first_exercise(
    make_session: Callable[..., WatchSession],
    store: ProgressStore,
    workspace: Workspace,
    fake_grading: FakeGrading,
    take_output,
) -> None:
    session = make_session()
    session.begin()
    out = take_output()
    assert f"Exercise 1/{FILES} · mini-basics/first-backward" in out
    assert "Your first backward" in out
    assert "02-first-backward.py" in out
    assert store.position() == ("mini-basics", "first-backward")
    path = workspace.path_of(session.current)
    assert session.on_files({str(path)}) is None, "nothing changed: nothing graded"
    assert fake_grading.calls == []


def test_wrong_then_right_file(
    make_session: Callable[..., WatchSession],
    workspace: Workspace,
    mini_course: Course,
    store: ProgressStore,
    fake_grading: FakeGrading,
    take_output,
) -> None:
    session = make_session()
    session.begin()
    take_output()
    _, step = mini_course.find(FIRST)

    wrong = "import torch\nx = torch.ones(2, 2, requires_grad=True)\nprint(x)\n"
    path = save(workspace, FIRST, wrong)
    attempt = session.on_files({str(path)})
    assert attempt is not None and attempt.verdict.status == "fail"
    out = take_output()
    assert "NOT YET" in out and "score 0/1" in out
    assert "✗ x.grad: x.grad is None" in out
    assert "expected tensor([1., 1.])" in out
    assert "printed by learner" in out, "the learner's own output is shown"
    assert store.attempts(FIRST) == 1 and FIRST not in store.passed_steps()
    assert store.last_code(FIRST).endswith("print(x)\n")
    assert HEADER_END not in store.last_code(FIRST), "the app gets code, not the header"
    assert session.current.ref == FIRST

    save(workspace, FIRST, step.solution)
    attempt = session.on_files({str(path)})
    assert attempt is not None and attempt.verdict.passed
    out = take_output()
    assert "PASSED" in out and "Well done! Next exercise:" in out
    assert f"Exercise 2/{FILES} · mini-basics/who-tracks" in out  # the quiz comes next
    assert store.attempts(FIRST) == 2 and store.passed_steps() == {FIRST}
    assert store.last_code(FIRST) == step.solution
    assert session.current.ref == QUIZ
    assert store.position() == ("mini-basics", "who-tracks")
    # the grader got the whole file, so error lines match what the learner sees
    assert fake_grading.calls[-1][1].startswith("# autograd-tutor")
    assert split_code(fake_grading.calls[-1][1]) == step.solution


def test_error_shows_diagnosis(
    make_session: Callable[..., WatchSession], workspace: Workspace, take_output
) -> None:
    session = make_session()
    session.begin()
    take_output()
    path = save(workspace, FIRST, "import torch\nraise RuntimeError('boom')\n")
    attempt = session.on_files({str(path)})
    assert attempt is not None and attempt.verdict.status == "error"
    out = take_output()
    assert "DID NOT FINISH" in out
    assert "Diagnosis: RuntimeError: boom (line 3)" in out
    assert "Fix: Do not raise." in out


class PassEverything(FakeGrading):
    def grade_step(self, lesson: Any, step: Any, code: str, **kw: Any):  # type: ignore[override]
        return super().grade_step(lesson, step, step.solution, **kw)


def test_a_passing_run_is_diagnosed_too(
    make_session: Callable[..., WatchSession], workspace: Workspace, take_output
) -> None:
    # watch diagnosed failures only, the app every run: a pass that uses `.data` said nothing
    session = make_session(grading=PassEverything())
    session.begin()
    take_output()
    path = save(workspace, FIRST, "import torch\nx = torch.ones(2)\ny = x.data\n")
    attempt = session.on_files({str(path)})
    assert attempt is not None and attempt.verdict.passed
    out = take_output()
    assert "PASSED" in out
    assert "Diagnosis: `.data` hides changes from autograd" in out
    assert "Fix: Write x.detach() instead of x.data." in out


def test_error_line_is_said_in_chinese(
    make_session: Callable[..., WatchSession], workspace: Workspace, take_output
) -> None:
    session = make_session(lang="zh")
    session.begin()
    take_output()
    path = save(workspace, FIRST, "import torch\nraise RuntimeError('boom')\n")
    session.on_files({str(path)})
    out = take_output()
    assert "诊断：RuntimeError：boom（第 3 行）" in out
    assert "line" not in out


def test_unchanged_content_is_not_regraded(
    make_session: Callable[..., WatchSession], workspace: Workspace, fake_grading: FakeGrading
) -> None:
    session = make_session()
    path = save(workspace, FIRST, "import torch\n")
    assert session.on_files({str(path)}) is not None
    later = time.time() + 5
    os.utime(path, (later, later))  # a touch: new mtime, same content
    assert session.on_files({str(path)}) is None
    path.write_text(path.read_text(encoding="utf-8"), encoding="utf-8")  # a double write
    assert session.on_files({str(path)}) is None
    assert len(fake_grading.calls) == 1
    assert session.handle_key("r")
    assert len(fake_grading.calls) == 2, "r re-runs on demand"


def test_saving_another_exercise_switches_to_it(
    make_session: Callable[..., WatchSession], workspace: Workspace, take_output
) -> None:
    session = make_session()
    session.begin()
    take_output()
    path = save(workspace, FIX, "import torch\nx = 1\n")
    manifest = workspace.root / ".tutor-exercises.json"
    attempt = session.on_files({str(path), str(manifest), str(path) + ".swp"})
    assert attempt is not None and attempt.verdict.step == FIX
    assert session.current.ref == FIX
    assert f"Exercise 3/{FILES} · mini-graph/fix-scalar" in take_output()


def test_keys_hint_next_quit(
    make_session: Callable[..., WatchSession],
    mini_course: Course,
    store: ProgressStore,
    take_output,
) -> None:
    session = make_session()
    _, step = mini_course.find(FIRST)
    assert session.handle_key("h")
    assert f"Hint 1/2: {step.hints[0].en}" in take_output()
    assert store.hints_revealed(FIRST) == 1
    assert session.handle_key("h")
    assert f"Hint 2/2: {step.hints[1].en}" in take_output()
    assert session.handle_key("h")
    out = take_output()
    assert "That was the last hint." in out and step.hints[1].en in out
    assert store.hints_revealed(FIRST) == 2

    assert session.handle_key("n")
    assert session.current.ref == QUIZ
    assert store.position() == ("mini-basics", "who-tracks")
    assert f"Exercise 2/{FILES}" in take_output()
    assert session.handle_key("?")
    assert "keys: h hint" in take_output()
    assert session.handle_key("q") is False


def test_chinese_messages(make_session: Callable[..., WatchSession], mini_course, take_output):
    session = make_session(lang="zh")
    session.begin()
    _, step = mini_course.find(FIRST)
    session.handle_key("h")
    out = take_output()
    assert f"练习 1/{FILES}" in out and step.title.zh in out
    assert f"提示 1/2：{step.hints[0].zh}" in out


def test_resumes_where_the_app_left_off(
    make_session: Callable[..., WatchSession], store: ProgressStore
) -> None:
    store.set_position("mini-graph", "fix-scalar")
    assert make_session().current.ref == FIX
    # a passed position is skipped for the first exercise not passed yet
    store.record_attempt(FIX, "", passed=True, score=1, max_score=1)
    assert make_session().current.ref == FIRST


def test_own_writes_do_not_trigger_a_run(
    make_session: Callable[..., WatchSession],
    workspace: Workspace,
    fake_grading: FakeGrading,
    take_output,
) -> None:
    session = make_session()
    fix_path = workspace.root / "02-mini-graph/01-fix-scalar.py"
    fix_path.unlink()
    session.handle_key("n")  # (the quiz)
    session.handle_key("n")  # moving to a deleted exercise writes it again
    assert fix_path.is_file()
    assert "Wrote 02-mini-graph/01-fix-scalar.py again" in take_output()
    assert session.on_files({str(fix_path)}) is None
    assert fake_grading.calls == []
    assert not workspace.changed_by_learner(workspace.load_manifest().entry(FIX))


def test_a_deleted_current_file_is_said(
    make_session: Callable[..., WatchSession], workspace: Workspace, take_output
) -> None:
    session = make_session()
    path = workspace.path_of(session.current)
    path.unlink()
    assert session.on_files({str(path)}) is None
    assert "is missing; press n/r to write it again" in take_output()


def test_all_passed(
    make_session: Callable[..., WatchSession],
    workspace: Workspace,
    mini_course: Course,
    store: ProgressStore,
    take_output,
) -> None:
    session = make_session()
    for entry in session.entries[1:]:
        store.record_attempt(entry.ref, "", passed=True, score=1, max_score=1)
    path = save(workspace, FIRST, mini_course.find(FIRST)[1].solution)
    assert session.on_files({str(path)}).verdict.passed
    assert "Every exercise here has passed" in take_output()


def test_run_loop_takes_keys_and_file_changes_from_one_queue(
    make_session: Callable[..., WatchSession], workspace: Workspace, store: ProgressStore
) -> None:
    session = make_session()
    events: queue.Queue = queue.Queue()
    loop = threading.Thread(target=run_loop, args=(session, events), daemon=True)
    loop.start()
    path = save(workspace, FIRST, "import torch\n")
    events.put(FilesChanged(frozenset({str(path)})))
    events.put(KeyPressed("h"))
    events.put(KeyPressed("q"))
    loop.join(timeout=30)
    assert not loop.is_alive(), "q ends the loop"
    assert store.attempts(FIRST) == 1 and store.hints_revealed(FIRST) == 1


def test_key_reader_line_mode() -> None:
    events: queue.Queue = queue.Queue()
    reader = KeyReader(events, io.StringIO("h\n\nnext\nq\n"))
    reader.start()
    got = [events.get(timeout=10) for _ in range(4)]
    reader.close()
    assert not reader.is_tty
    assert [e.key for e in got] == ["h", "next", "q", "\x04"], (
        "a line is a command; the end of input quits"
    )


def test_a_grading_error_is_reported_and_watching_goes_on(
    make_session: Callable[..., WatchSession], store: ProgressStore, take_output
) -> None:
    from tutor.errors import TutorError

    class Broken(FakeGrading):
        def grade_step(self, *args: Any, **kw: Any):  # type: ignore[override]
            raise TutorError("device cuda:0 is gone")

    session = make_session(grading=Broken())
    assert session.handle_key("r") is True
    assert "Could not grade this save: device cuda:0 is gone. Still watching." in take_output()
    assert store.attempts(FIRST) == 0


def test_key_reader_on_a_terminal_reads_single_keys_and_restores_the_mode() -> None:
    import termios

    master, slave = os.openpty()
    stream = os.fdopen(slave, "r")
    try:
        before = termios.tcgetattr(slave)
        events: queue.Queue = queue.Queue()
        reader = KeyReader(events, stream)
        reader.start()
        assert reader.is_tty
        cbreak = termios.tcgetattr(slave)
        assert not cbreak[3] & termios.ICANON and not cbreak[3] & termios.ECHO
        os.write(master, b"h")  # no Enter: cbreak delivers it at once
        assert events.get(timeout=10) == KeyPressed("h")
        reader.close()
        assert termios.tcgetattr(slave) == before
    finally:
        stream.close()
        os.close(master)


def test_command_words_work_like_keys(
    make_session: Callable[..., WatchSession], store: ProgressStore, take_output
) -> None:
    session = make_session(lang="zh")
    assert session.handle_key("hint") and session.handle_key(" 提示 ")
    assert store.hints_revealed(FIRST) == 2
    assert session.handle_key("NEXT")
    assert session.current.ref == QUIZ
    take_output()
    assert session.handle_key("nope")
    assert "未知按键 'nope'" in take_output()
    assert session.handle_key("退出") is False
    assert session.handle_key("\x04") is False, "the end of piped input quits"


def test_a_missing_file_is_written_again_with_the_starter_of_the_session_language(
    make_session: Callable[..., WatchSession], workspace: Workspace
) -> None:
    session = make_session(lang="zh")
    entry = session.current
    assert entry.ref == FIRST
    workspace.path_of(entry).unlink()
    session.handle_key("r")
    text = workspace.read(session.current) or ""
    assert "# 在这里写你的代码" in text and "# your code here" not in text

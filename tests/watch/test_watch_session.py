"""`tutor watch` driven through file edits and keys, without a terminal (fake grader)."""

from __future__ import annotations

import io
import os
import queue
import threading
import time
from collections.abc import Callable

from tutor.cli.watch_cmd import KeyReader, WatchSession, run_loop
from tutor.course.models import Course
from tutor.grading.models import Verdict
from tutor.progress import ProgressStore
from tutor.workspace import HEADER_END, Workspace, split_code

FIRST = "mini-basics/first-backward"
FIX = "mini-graph/fix-scalar"


def save(workspace: Workspace, ref: str, body: str) -> None:
    """Save new code under the file's header, the way an editor would."""
    entry = workspace.load_manifest().entry(ref)
    path = workspace.path_of(entry)
    header = path.read_text(encoding="utf-8").partition(HEADER_END + "\n")[0]
    path.write_text(header + HEADER_END + "\n" + body, encoding="utf-8")


def settle(session: WatchSession) -> Verdict | None:
    """Two polls: the first sees the change, the second grades it once it held still."""
    first = session.poll()
    assert first is None, "a change is graded only after it held still for one poll"
    return session.poll()


def test_begin_shows_the_first_exercise(
    make_session: Callable[..., WatchSession], store: ProgressStore, take_output
) -> None:
    session = make_session()
    session.begin()
    out = take_output()
    assert "Exercise 1/5 · mini-basics/first-backward" in out
    assert "Your first backward" in out
    assert "02-first-backward.py" in out
    assert store.position() == ("mini-basics", "first-backward")
    assert session.poll() is None, "nothing changed: nothing graded"


def test_wrong_then_right_file(
    make_session: Callable[..., WatchSession],
    workspace: Workspace,
    mini_course: Course,
    store: ProgressStore,
    fake_grader,
    take_output,
) -> None:
    session = make_session()
    session.begin()
    take_output()
    _, step = mini_course.find(FIRST)

    save(workspace, FIRST, "import torch\nx = torch.ones(2, 2, requires_grad=True)\nprint(x)\n")
    verdict = settle(session)
    assert verdict is not None and verdict.status == "fail"
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
    verdict = settle(session)
    assert verdict is not None and verdict.passed
    out = take_output()
    assert "PASSED" in out and "Well done! Next exercise:" in out
    assert "Exercise 2/5 · mini-graph/fix-scalar" in out
    assert store.attempts(FIRST) == 2 and store.passed_steps() == {FIRST}
    assert store.last_code(FIRST) == step.solution
    assert session.current.ref == FIX
    assert store.position() == ("mini-graph", "fix-scalar")
    # the grader got the whole file, so error lines match what the learner sees
    assert fake_grader.calls[-1][1].startswith("# autograd-tutor")
    assert split_code(fake_grader.calls[-1][1]) == step.solution


def test_error_shows_diagnosis(
    make_session: Callable[..., WatchSession], workspace: Workspace, take_output
) -> None:
    session = make_session()
    session.begin()
    take_output()
    save(workspace, FIRST, "import torch\nraise RuntimeError('boom')\n")
    verdict = settle(session)
    assert verdict is not None and verdict.status == "error"
    out = take_output()
    assert "DID NOT FINISH" in out
    assert "Diagnosis: RuntimeError: boom (line 3)" in out
    assert "Fix: Do not raise." in out


def test_error_line_is_said_in_chinese(
    make_session: Callable[..., WatchSession], workspace: Workspace, take_output
) -> None:
    # zh printed "诊断: ... (line 3)"; `tutor run` says "(第 3 行)"
    session = make_session(lang="zh")
    session.begin()
    take_output()
    save(workspace, FIRST, "import torch\nraise RuntimeError('boom')\n")
    settle(session)
    out = take_output()
    assert "诊断: RuntimeError：boom (第 3 行)" in out
    assert "line" not in out


def test_unchanged_content_is_not_regraded(
    make_session: Callable[..., WatchSession], workspace: Workspace, fake_grader
) -> None:
    session = make_session()
    path = workspace.path_of(session.current)
    later = time.time() + 5
    os.utime(path, (later, later))  # a touch: new mtime, same content
    assert session.poll() is None and session.poll() is None
    assert fake_grader.calls == []
    assert session.handle_key("r")
    assert len(fake_grader.calls) == 1, "r re-runs on demand"


def test_saving_another_exercise_switches_to_it(
    make_session: Callable[..., WatchSession], workspace: Workspace, take_output
) -> None:
    session = make_session()
    session.begin()
    take_output()
    save(workspace, FIX, "import torch\nx = 1\n")
    verdict = settle(session)
    assert verdict is not None and verdict.step == FIX
    assert session.current.ref == FIX
    assert "Exercise 2/5 · mini-graph/fix-scalar" in take_output()


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
    assert session.current.ref == FIX
    assert store.position() == ("mini-graph", "fix-scalar")
    assert "Exercise 2/5" in take_output()
    assert session.handle_key("?")
    assert "keys: h hint" in take_output()
    assert session.handle_key("q") is False


def test_chinese_messages(make_session: Callable[..., WatchSession], mini_course, take_output):
    session = make_session(lang="zh")
    session.begin()
    _, step = mini_course.find(FIRST)
    session.handle_key("h")
    out = take_output()
    assert "练习 1/5" in out and step.title.zh in out
    assert f"提示 1/2: {step.hints[0].zh}" in out


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
    fake_grader,
    take_output,
) -> None:
    session = make_session()
    fix_path = workspace.root / "02-mini-graph/01-fix-scalar.py"
    fix_path.unlink()
    session.handle_key("n")  # moving to a deleted exercise writes it again
    assert fix_path.is_file()
    assert "Wrote 02-mini-graph/01-fix-scalar.py again" in take_output()
    assert session.poll() is None and session.poll() is None
    assert fake_grader.calls == []
    assert not workspace.changed_by_learner(workspace.load_manifest().entry(FIX))


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
    save(workspace, FIRST, mini_course.find(FIRST)[1].solution)
    assert settle(session).passed
    assert "Every exercise here has passed" in take_output()


def test_run_loop_with_keys_from_a_queue(
    make_session: Callable[..., WatchSession],
    workspace: Workspace,
    store: ProgressStore,
) -> None:
    session = make_session()
    keys: queue.Queue[str] = queue.Queue()

    def next_key() -> str | None:
        try:
            return keys.get_nowait()
        except queue.Empty:
            return None

    loop = threading.Thread(target=run_loop, args=(session, next_key), daemon=True)
    loop.start()
    save(workspace, FIRST, "import torch\n")
    deadline = time.monotonic() + 30
    while store.attempts(FIRST) == 0:
        assert time.monotonic() < deadline, "the loop never graded the saved file"
        time.sleep(0.01)
    keys.put("q")
    loop.join(timeout=30)
    assert not loop.is_alive(), "q ends the loop"


def test_key_reader_line_mode() -> None:
    reader = KeyReader(io.StringIO("h\n\nnext\nq\n"))
    reader.start()
    got = []
    deadline = time.monotonic() + 10
    while len(got) < 4 and time.monotonic() < deadline:
        key = reader.get()
        if key is None:
            time.sleep(0.01)
        else:
            got.append(key)
    reader.close()
    assert not reader.is_tty
    assert got == ["h", "next", "q", "\x04"], "a line is a command; the end of input quits"


def test_a_grading_error_is_reported_and_watching_goes_on(
    workspace: Workspace,
    mini_course: Course,
    store: ProgressStore,
    console,
    take_output,
) -> None:
    from tutor.errors import TutorError

    def broken(lesson: object, step: object, code: str) -> Verdict:
        raise TutorError("device cuda:0 is gone")

    session = WatchSession(
        workspace, mini_course, grader=broken, store=store, console=console, lang="en"
    )
    assert session.handle_key("r") is True
    assert "Could not grade this save: device cuda:0 is gone. Still watching." in take_output()
    assert store.attempts(FIRST) == 0


def test_key_reader_on_a_terminal_reads_single_keys_and_restores_the_mode() -> None:
    import termios

    master, slave = os.openpty()
    stream = os.fdopen(slave, "r")
    try:
        before = termios.tcgetattr(slave)
        reader = KeyReader(stream)
        reader.start()
        assert reader.is_tty
        cbreak = termios.tcgetattr(slave)
        assert not cbreak[3] & termios.ICANON and not cbreak[3] & termios.ECHO
        os.write(master, b"h")  # no Enter: cbreak delivers it at once
        deadline = time.monotonic() + 10
        key = reader.get()
        while key is None and time.monotonic() < deadline:
            time.sleep(0.01)
            key = reader.get()
        assert key == "h"
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
    assert session.current.ref == FIX
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
    text = workspace.read(session.entries[session.index]) or ""
    assert "# 在这里写你的代码" in text and "# your code here" not in text

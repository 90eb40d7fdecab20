"""Exercise files end to end: real sandbox, grading and diagnosis; the CLI as a user calls it."""

from __future__ import annotations

import functools
import io
import os
import subprocess
import sys
import threading
import types
from collections.abc import Iterator
from pathlib import Path

import pytest
from rich.console import Console
from watch_fakes import FILES, QUIZ, right_body, save

from tutor.cli import main
from tutor.cli.watch_cmd import WatchSession
from tutor.course.models import Course
from tutor.course.quiz import choice_order, local_learner
from tutor.learning import LearningSession
from tutor.learning.exercises import ExerciseFiles
from tutor.progress import ProgressStore
from tutor.workspace import Workspace

pytestmark = pytest.mark.slow

FIX = "mini-graph/fix-scalar"
FIRST = "mini-basics/first-backward"
REPO = Path(__file__).resolve().parents[2]


def test_watch_with_real_grading_wrong_then_right(
    sandbox, workspace: Workspace, mini_course: Course, store: ProgressStore, tmp_path: Path
) -> None:
    from tutor.grading import ExpectedCache, grade_step

    console = Console(file=io.StringIO(), width=120, color_system=None, soft_wrap=True)
    grading = types.SimpleNamespace(
        grade_step=functools.partial(grade_step, cache=ExpectedCache(tmp_path / "cache"))
    )
    learning = LearningSession(mini_course, sandbox, store, lang="en", grading=grading)
    session = WatchSession(ExerciseFiles(learning, workspace), console)
    session.handle_key("n")  # past the quiz
    session.handle_key("n")  # to the fix-the-bug exercise
    assert session.current.ref == FIX

    # the starter as written raises the seed's error: graded, diagnosed, recorded
    assert session.handle_key("r")
    out = console.file.getvalue()
    assert "DID NOT FINISH" in out or "NOT YET" in out
    assert "Diagnosis:" in out
    assert "scalar" in out
    assert store.attempts(FIX) == 1 and FIX not in store.passed_steps()

    _, step = mini_course.find(FIX)
    path = save(workspace, FIX, step.solution)
    attempt = session.on_files({str(path)})
    assert attempt is not None and attempt.verdict.passed, attempt
    assert "PASSED" in console.file.getvalue()
    assert FIX in store.passed_steps() and store.attempts(FIX) == 2
    assert session.current.ref != FIX, "a pass moves on"


def _cli(tmp_path: Path, *args: str) -> list[str]:
    return [
        "--lessons",
        str(REPO / "tests" / "fixtures" / "mini_course"),
        "--data-dir",
        str(tmp_path / "data"),
        *args,
    ]


def test_start_then_verify_then_fix_everything(
    tmp_path: Path, mini_course: Course, capsys: pytest.CaptureFixture[str]
) -> None:
    ex = tmp_path / "ex"
    assert main(_cli(tmp_path, "start", "--dir", str(ex), "--lang", "en")) == 0
    assert f"Wrote {FILES} exercise files" in capsys.readouterr().out
    refs = [entry.ref for entry in Workspace(ex).load_manifest().exercises]

    assert main(_cli(tmp_path, "verify", "--dir", str(ex), "--device", "cpu")) == 1
    out = capsys.readouterr().out
    assert f"0/{FILES} exercises pass" in out
    # an unanswered quiz says how to answer it
    assert "no choice picked yet" in out.partition("Why 2.")[2].partition("Why 3.")[0]
    # why each fails: the fix-the-bug starter raises the seed's error, with its line
    why = out.partition("Why 3. 02-mini-graph/01-fix-scalar.py (mini-graph/fix-scalar)")[2]
    assert why, out
    why = why.partition("Why 4.")[0]
    assert "RuntimeError at line" in why and "only for scalar outputs" in why
    assert "✗ " in why and "Diagnosis:" in why and "Fix:" in why
    with ProgressStore.default(tmp_path / "data") as store:
        assert store.passed_steps() == set()
        assert all(store.attempts(ref) == 0 for ref in refs), "untouched files are no attempt"

    ws = Workspace(ex)
    for entry in ws.load_manifest().exercises:  # quizzes in this user's order (as `start`)
        save(ws, entry.ref, right_body(mini_course, entry.ref, local_learner()))
    for _ in range(2):
        assert main(_cli(tmp_path, "verify", "--dir", str(ex), "--device", "cpu")) == 0
        out = capsys.readouterr().out
        assert f"{FILES}/{FILES} exercises pass" in out and "Why" not in out
    with ProgressStore.default(tmp_path / "data") as store:
        assert store.passed_steps() == set(refs), "what verify passed is passed (tutor list)"
        assert all(store.attempts(ref) == 1 for ref in refs), "the same text counts once"

    # start again: every file was changed by the learner, none is overwritten
    before = {p: p.read_bytes() for p in ex.rglob("*.py")}
    assert main(_cli(tmp_path, "start", "--dir", str(ex))) == 0
    out = capsys.readouterr().out
    assert out.count("Kept ") == FILES
    assert {p: p.read_bytes() for p in ex.rglob("*.py")} == before


def test_verify_without_start_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(_cli(tmp_path, "verify", "--dir", str(tmp_path / "none"))) == 2
    err = capsys.readouterr().err
    assert "no exercises in" in err and "tutor start" in err and "Traceback" not in err


def _read_until(stream: io.TextIOBase, needle: str, lines: list[str], timeout_s: float) -> None:
    """Collect lines from ``stream`` (in a thread, so a hang cannot block the test)."""
    done = threading.Event()

    def pump() -> None:
        for line in stream:
            lines.append(line)
            if needle in line:
                done.set()
                return

    threading.Thread(target=pump, daemon=True).start()
    assert done.wait(timeout_s), f"never saw {needle!r} in:\n{''.join(lines)}"


@pytest.fixture
def watch_process(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], Path]]:
    ex = tmp_path / "ex"
    assert main(_cli(tmp_path, "start", "--dir", str(ex), "--lang", "en")) == 0
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "COLUMNS": "120"}
    command = _cli(tmp_path, "watch", "--dir", str(ex), "--device", "cpu")
    proc = subprocess.Popen(
        [sys.executable, "-m", "tutor", *command],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=REPO,
        env=env,
    )
    try:
        yield proc, ex
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def test_watch_as_a_subprocess(
    watch_process: tuple[subprocess.Popen[str], Path], mini_course: Course, tmp_path: Path
) -> None:
    proc, ex = watch_process
    lines: list[str] = []
    _read_until(proc.stdout, "type h, n, r or q", lines, 120)
    assert any(f"Exercise 1/{FILES}" in line for line in lines)

    ws = Workspace(ex)
    save(ws, FIRST, "import torch\nx = torch.ones(2, 2, requires_grad=True)\n")
    _read_until(proc.stdout, "score", lines, 120)
    assert any("NOT YET" in line for line in lines)

    save(ws, FIRST, mini_course.find(FIRST)[1].solution)
    _read_until(proc.stdout, f"Exercise 2/{FILES}", lines, 120)
    assert any("PASSED" in line for line in lines)

    # the quiz's file numbers its choices in this learner's order, as the app shows them
    quiz = mini_course.find(QUIZ)[1]
    order = choice_order(local_learner(), QUIZ, len(quiz.choices))
    text = ws.path_of(ws.load_manifest().entry(QUIZ)).read_text(encoding="utf-8")
    for number, index in enumerate(order, 1):
        assert f"#   {number}. {quiz.choices[index].text.en}" in text
    wrong = next(n for n, i in enumerate(order, 1) if not quiz.choices[i].correct)
    save(ws, QUIZ, f"ANSWER = [{wrong}]\n")
    _read_until(proc.stdout, "score 0/1", lines, 120)
    save(ws, QUIZ, right_body(mini_course, QUIZ, local_learner()))
    _read_until(proc.stdout, f"Exercise 3/{FILES}", lines, 120)

    proc.stdin.write("h\n")
    proc.stdin.flush()
    _read_until(proc.stdout, "Hint 1/2", lines, 60)
    proc.stdin.write("q\n")
    proc.stdin.flush()
    assert proc.wait(timeout=60) == 0
    with ProgressStore.default(tmp_path / "data") as store:
        assert store.passed_steps() == {FIRST, QUIZ}
        assert store.attempts(FIRST) == 2 and store.attempts(QUIZ) == 2
        assert store.hints_revealed(FIX) == 1
        assert store.position() == ("mini-graph", "fix-scalar")


def test_watch_with_piped_commands_runs_them_and_exits_at_the_end_of_input(
    tmp_path: Path,
) -> None:
    """`printf 'hint\\nr\\n' | tutor watch`: each line is a command; EOF quits with 0."""
    ex = tmp_path / "ex"
    assert main(_cli(tmp_path, "start", "--dir", str(ex), "--lang", "zh")) == 0
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "COLUMNS": "120"}
    command = _cli(tmp_path, "watch", "--dir", str(ex), "--device", "cpu")
    result = subprocess.run(
        [sys.executable, "-m", "tutor", *command],
        input="hint\n提示\nr\n",
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=180,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "提示 1/2" in out and "提示 2/2" in out, out
    assert "得分" in out, "r graded the file"
    assert out.rstrip().endswith("再见，你的进度已保存。")
    with ProgressStore.default(tmp_path / "data") as store:
        assert store.hints_revealed(FIRST) == 2
        assert store.attempts(FIRST) == 1

"""`tutor list`, `tutor hint`, `tutor reset` as a user calls them, and `verify`'s reasons
(fake grading here; tests/watch/test_exercises_e2e.py runs verify on the real sandbox)."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.console import Console
from watch_fakes import FILES, FIRST, FIX, MINI_COURSE, QUIZ, FakeGrading, save

from tutor.cli import main
from tutor.cli.exercise_view import AttemptView
from tutor.course.models import Course
from tutor.learning.exercises import ExerciseFiles
from tutor.progress import ProgressStore
from tutor.workspace import Workspace, render_exercise


def cli(tmp_path: Path, *args: str) -> int:
    return main(["--lessons", str(MINI_COURSE), "--data-dir", str(tmp_path / "data"),
                 *args, "--dir", str(tmp_path / "exercises")])


@pytest.fixture
def started(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Workspace:
    assert cli(tmp_path, "start", "--lang", "en") == 0
    capsys.readouterr()
    return Workspace(tmp_path / "exercises")


def row(out: str, path_part: str) -> str:
    (line,) = [line for line in out.splitlines() if path_part in line and "Next" not in line]
    return line


def test_list_shows_progress_per_exercise(
    tmp_path: Path, started: Workspace, capsys: pytest.CaptureFixture[str]
) -> None:
    with ProgressStore.default(tmp_path / "data") as store:
        store.record_attempt(FIRST, "x", passed=False, score=0, max_score=1)
        store.record_attempt(FIRST, "y", passed=True, score=1, max_score=1)
        store.record_attempt(FIX, "z", passed=False, score=0.5, max_score=2)
        store.set_hints_revealed(FIX, 1)
        store.set_position("mini-graph", "fix-scalar")
    (started.root / "02-mini-graph/02-see-the-error.py").unlink()
    assert cli(tmp_path, "list") == 0
    out = capsys.readouterr().out
    first = row(out, "02-first-backward.py")
    assert "✓ passed" in first and "1/1" in first and " 2 " in first
    fix = row(out, "01-fix-scalar.py")
    assert fix.lstrip().startswith("▶3"), "the exercise the learner is on is marked"
    assert "… not yet" in fix and "0.5/2" in fix and "1/2" in fix
    assert "· not started" in row(out, "03-no-grad-print.py")
    assert "✗ file missing" in row(out, "02-see-the-error.py")
    assert "· not started" in row(out, "03-who-tracks.py")  # the quiz's file
    assert f"1/{FILES} exercises passed" in out
    assert "Next: 3. 02-mini-graph/01-fix-scalar.py" in out and "tutor hint 3" in out


def test_list_in_chinese_and_when_all_passed(
    tmp_path: Path, started: Workspace, capsys: pytest.CaptureFixture[str]
) -> None:
    with ProgressStore.default(tmp_path / "data") as store:
        for entry in started.load_manifest().exercises:
            store.record_attempt(entry.ref, "x", passed=True, score=1, max_score=1)
    assert cli(tmp_path, "list", "--lang", "zh") == 0
    out = capsys.readouterr().out
    assert out.count("✓ 已通过") == FILES
    assert f"{FILES}/{FILES} 个练习已通过" in out and "这里的所有练习都已通过" in out


def test_hint_gives_the_next_level_each_time_and_remembers_it(
    tmp_path: Path, started: Workspace, mini_course: Course, capsys: pytest.CaptureFixture[str]
) -> None:
    hints = mini_course.find(FIX)[1].hints
    assert cli(tmp_path, "hint", FIX) == 0
    assert f"Hint 1/2: {hints[0].en}" in capsys.readouterr().out
    # the same exercise named by its file, then by its step id
    assert cli(tmp_path, "hint", "02-mini-graph/01-fix-scalar.py") == 0
    assert f"Hint 2/2: {hints[1].en}" in capsys.readouterr().out
    assert cli(tmp_path, "hint", "fix-scalar", "--lang", "zh") == 0
    out = capsys.readouterr().out
    assert "这已经是最后一条提示了。" in out and f"提示 2/2：{hints[1].zh}" in out
    with ProgressStore.default(tmp_path / "data") as store:
        assert store.hints_revealed(FIX) == 2
        assert store.hints_revealed(FIRST) == 0
    # no exercise named: the one the learner is on (the first not passed here)
    assert cli(tmp_path, "hint") == 0
    first_hint = mini_course.find(FIRST)[1].hints[0].en
    assert f"Hint 1/2: {first_hint}" in capsys.readouterr().out


def test_an_exercise_that_does_not_exist_is_a_clear_error(
    tmp_path: Path, started: Workspace, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli(tmp_path, "hint", "fix-scalr") == 2
    err = capsys.readouterr().err
    assert "no exercise 'fix-scalr'" in err and "did you mean" in err and "fix-scalar" in err
    assert "Traceback" not in err
    assert cli(tmp_path, "reset", "9") == 2
    err = capsys.readouterr().err
    assert "no exercise '9'" in err and "tutor list" in err
    assert cli(tmp_path, "hint", "nope", "--lang", "zh") == 2
    assert "中没有练习 'nope'" in capsys.readouterr().err


def test_reset_writes_the_starter_again_and_keeps_the_old_code(
    tmp_path: Path, started: Workspace, mini_course: Course, capsys: pytest.CaptureFixture[str]
) -> None:
    path = save(started, FIX, "import torch\nmy = 'work'\n")
    changed = path.read_text(encoding="utf-8")
    with ProgressStore.default(tmp_path / "data") as store:
        store.record_attempt(FIX, "my work", passed=True, score=1, max_score=1)
    assert cli(tmp_path, "reset", "3") == 0
    out = capsys.readouterr().out
    assert "Reset 3. 02-mini-graph/01-fix-scalar.py to the starter code" in out
    lesson, step = mini_course.find(FIX)
    starter = step.starter_for("en")
    assert path.read_text(encoding="utf-8") == render_exercise(lesson, step, 1, "en", starter)
    backup = path.with_name(path.name + ".bak")
    assert backup.read_text(encoding="utf-8") == changed, "the learner's code is kept"
    assert str(backup) in out
    with ProgressStore.default(tmp_path / "data") as store:
        assert store.last_code(FIX) == starter, "the app shows the starter too"
        assert FIX in store.passed_steps(), "a reset keeps progress"
    entry = started.load_manifest().entry(FIX)
    assert not started.changed_by_learner(entry), "a later `tutor start` may update it"

    backup.unlink()
    assert cli(tmp_path, "reset", FIX, "--lang", "zh") == 0
    assert "已将 3. 02-mini-graph/01-fix-scalar.py 恢复为初始代码" in capsys.readouterr().out
    assert not backup.exists(), "an untouched starter needs no backup"


def test_reset_needs_an_exercise(tmp_path: Path, started: Workspace) -> None:
    with pytest.raises(SystemExit) as exc:
        cli(tmp_path, "reset")
    assert exc.value.code == 2


def test_verify_records_each_new_text_once_and_says_why_it_fails(
    make_files: Callable[..., ExerciseFiles],
    workspace: Workspace,
    store: ProgressStore,
    fake_grading: FakeGrading,
    mini_course: Course,
) -> None:
    files = make_files()
    save(workspace, FIRST, mini_course.find(FIRST)[1].solution)
    save(workspace, FIX, "import torch\nraise RuntimeError('boom')\n")
    results = files.verify(jobs=3)
    assert [e.ref for e, _ in results] == [e.ref for e in workspace.load_manifest().exercises]
    verdicts = {entry.ref: attempt.verdict for entry, attempt in results}
    assert verdicts[FIRST].passed and verdicts[FIX].status == "error"
    assert len(fake_grading.calls) == 5, "every code file is run and graded"
    assert verdicts[QUIZ].status == "not_gradable", "an unanswered quiz says how to answer"
    # the two saved texts count as attempts; untouched starters do not
    assert store.attempts(FIRST) == 1 and store.attempts(FIX) == 1
    assert sum(store.attempts(e.ref) for e in files.entries) == 2
    assert store.passed_steps() == {FIRST}

    again = files.verify(jobs=2)
    assert len(fake_grading.calls) == 10, "graded again"
    assert store.attempts(FIRST) == 1 and store.attempts(FIX) == 1, "but not counted again"

    console = Console(file=io.StringIO(), width=120, color_system=None)
    view = AttemptView(console, "en")
    (fix_attempt,) = [a for e, a in again if e.ref == FIX]
    view.why(fix_attempt)
    out = console.file.getvalue()
    assert "RuntimeError at line 3: boom" in out
    assert "✗ x.grad: x.grad is None" in out and "expected tensor([1., 1.])" in out
    assert "Diagnosis: RuntimeError: boom (line 3)" in out and "Fix: Do not raise." in out


def test_files_whose_step_is_gone_or_no_longer_code_are_skipped(
    tmp_path: Path, started: Workspace, capsys: pytest.CaptureFixture[str]
) -> None:
    from tutor.workspace import ExerciseEntry

    manifest = started.load_manifest()
    manifest.exercises += [
        ExerciseEntry(ref="mini-basics/gone", kind="code", path="01-mini-basics/09-gone.py"),
        ExerciseEntry(ref="mini-basics/intro", kind="code", path="01-mini-basics/01-intro.py"),
    ]
    started.save_manifest(manifest)
    assert cli(tmp_path, "list") == 0
    out = capsys.readouterr().out
    assert "Skipping mini-basics/gone: no such code exercise" in out
    assert "Skipping mini-basics/intro" in out
    assert f"0/{FILES} exercises passed" in out
    assert "09-gone.py" not in out and "01-intro.py" not in out
    assert cli(tmp_path, "hint", "mini-basics/intro") == 2
    assert "no exercise 'mini-basics/intro'" in capsys.readouterr().err


def test_each_learner_answers_a_quiz_file_in_their_own_numbers(
    tmp_path: Path, mini_course: Course, fake_grading: FakeGrading
) -> None:
    """Always writing 1 is worth nothing: the file of each learner numbers the choices in
    their order (the app's), and the same numbers are graded in that order."""
    from watch_fakes import NoRunner, right_body

    from tutor.course.quiz import choice_order
    from tutor.learning import LearningSession

    ref = QUIZ  # one right answer of two: 1 is right for some learners, wrong for others
    _, quiz = mini_course.find(ref)
    firsts = {}
    for name in ("ana", "eli"):
        ws = Workspace(tmp_path / name / "ex")
        ws.write_course(mini_course, lang="en", learner=name)
        with ProgressStore.default(tmp_path / name / "data") as store:
            session = LearningSession(mini_course, NoRunner(), store, grading=fake_grading,
                                      learner=name)
            files = ExerciseFiles(session, ws)
            entry = files.entry(ref)
            save(ws, ref, "ANSWER = [1]\n")
            firsts[name] = files.submit(entry).verdict.passed  # type: ignore[union-attr]
            save(ws, ref, right_body(mini_course, ref, name))
            attempt = files.submit(entry)
            assert attempt is not None and attempt.verdict.passed, name
            assert session.ref != ref, "grading a file does not move the learner"
            assert store.attempts(ref) == 2 and ref in store.passed_steps()
            # what the app shows this learner afterwards: the same picks, in its order
            order = choice_order(name, ref, len(quiz.choices))
            right = sorted(p for p, i in enumerate(order) if quiz.choices[i].correct)
            session.goto(*ref.split("/"))
            assert session.previous_choices() == right
    assert firsts == {"ana": True, "eli": False}, "choice 1 is not the same for everyone"


@pytest.mark.parametrize(("lang", "said"), [("en", "Did you mean backward()?"),
                                            ("zh", "你是不是想写 backward()？")])
def test_verify_and_watch_say_did_you_mean(lang: str, said: str) -> None:
    """Issue 22 #9: `y.backwards()` got "did you mean backward()" in the app only."""
    from tutor.grading.models import Verdict
    from tutor.i18n import T
    from tutor.learning import Attempt
    from tutor.sandbox.models import ErrorInfo, RunResult

    run = RunResult(outcome="error", device="cpu", error=ErrorInfo(
        type="AttributeError", message="'Tensor' object has no attribute 'backwards'",
        line=4, source_line="y.backwards()"))
    message = T("Your code raised AttributeError at line 4",
                "你的代码在第 4 行抛出了 AttributeError")
    attempt = Attempt("l/s", Verdict(step="l/s", status="error", score=0, max_score=1,
                                     run=run, checks=[], message=message))
    for show in ("why", "attempt"):  # tutor verify, tutor watch
        console = Console(file=io.StringIO(), width=120, color_system=None)
        getattr(AttemptView(console, lang), show)(attempt)
        assert said in console.file.getvalue(), show

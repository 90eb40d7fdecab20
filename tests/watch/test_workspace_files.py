"""`tutor start`'s files: header, starter, manifest hashes, and never overwriting changes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tutor.course.models import Course
from tutor.workspace import (
    HEADER_END,
    MANIFEST_NAME,
    Workspace,
    WorkspaceError,
    sha256_text,
    split_code,
)

FIRST = "01-mini-basics/02-first-backward.py"
FIX = "02-mini-graph/01-fix-scalar.py"


def test_writes_code_fix_and_quiz_steps_in_course_order(tmp_path: Path,
                                                       mini_course: Course) -> None:
    ws = Workspace(tmp_path / "ex")
    report = ws.write_course(mini_course, lang="en")
    manifest = ws.load_manifest()
    refs = [e.ref for e in manifest.exercises]
    expected = [
        f"{lesson.id}/{step.id}"
        for lesson in mini_course.lessons
        for step in lesson.steps
        if step.kind in ("code", "fix", "quiz")
    ]
    assert refs == expected
    assert [e.path for e in manifest.exercises] == sorted(report.written)
    assert FIRST in report.written and FIX in report.written
    # answer steps are reported, reading steps silently skipped; quizzes are files
    assert "mini-basics/who-tracks" not in report.not_written
    assert "01-mini-basics/03-who-tracks.py" in report.written
    assert "mini-basics/grad-value" in report.not_written
    assert "mini-basics/intro" not in report.not_written
    for entry in manifest.exercises:
        text = (ws.root / entry.path).read_text(encoding="utf-8")
        assert entry.sha256 == sha256_text(text)


def test_file_has_prompt_header_and_starter(workspace: Workspace, mini_course: Course) -> None:
    lesson, step = mini_course.find("mini-graph/fix-scalar")
    text = (workspace.root / FIX).read_text(encoding="utf-8")
    header, _, body = text.partition(HEADER_END + "\n")
    assert body == step.starter
    assert split_code(text) == step.starter
    assert all(line.startswith("#") for line in header.splitlines())
    assert lesson.title.en in header and step.title.en in header
    assert step.prompt.en.strip().splitlines()[0] in header
    assert f"Hints: {len(step.hints)} locked" in header
    assert step.hints[0].en not in header, "hints stay locked"
    compile(text, FIX, "exec")  # the header keeps it valid Python


def test_chinese_header(tmp_path: Path, mini_course: Course) -> None:
    ws = Workspace(tmp_path / "zh")
    ws.write_course(mini_course, lang="zh", lesson_ids=["mini-graph"])
    _, step = mini_course.find("mini-graph/fix-scalar")
    text = (ws.root / FIX).read_text(encoding="utf-8")
    assert step.title.zh in text and "提示" in text
    assert not (ws.root / FIRST).exists(), "only the lesson asked for"


def test_rerun_keeps_changed_files_and_updates_untouched_ones(
    workspace: Workspace, mini_course: Course
) -> None:
    changed = workspace.root / FIRST
    mine = changed.read_text(encoding="utf-8") + "y = x * 2  # my work\n"
    changed.write_text(mine, encoding="utf-8")
    untouched_before = (workspace.root / FIX).read_text(encoding="utf-8")

    report = workspace.write_course(mini_course, lang="zh")

    assert report.kept == [FIRST]
    assert changed.read_text(encoding="utf-8") == mine, "learner's file byte for byte"
    assert FIX in report.updated
    after = (workspace.root / FIX).read_text(encoding="utf-8")
    assert after != untouched_before and "提示" in after
    assert split_code(after) == split_code(untouched_before)
    # and a third run with nothing new changes nothing
    again = workspace.write_course(mini_course, lang="zh")
    assert again.kept == [FIRST] and not again.updated and not again.written
    assert FIX in again.unchanged


def test_file_tutor_did_not_write_is_kept(tmp_path: Path, mini_course: Course) -> None:
    ws = Workspace(tmp_path / "ex")
    theirs = ws.root / FIX
    theirs.parent.mkdir(parents=True)
    theirs.write_text("print('my own file')\n", encoding="utf-8")
    report = ws.write_course(mini_course, lang="en")
    assert FIX in report.kept
    assert theirs.read_text(encoding="utf-8") == "print('my own file')\n"
    entry = ws.load_manifest().entry("mini-graph/fix-scalar")
    assert entry is not None and entry.sha256 is None
    assert ws.changed_by_learner(entry)


def test_deleted_file_is_written_again(workspace: Workspace, mini_course: Course) -> None:
    (workspace.root / FIX).unlink()
    report = workspace.write_course(mini_course, lang="en")
    assert report.written == [FIX]


def test_saved_code_from_the_app_is_used_for_new_files(
    tmp_path: Path, mini_course: Course
) -> None:
    ws = Workspace(tmp_path / "ex")
    saved = {"mini-graph/fix-scalar": "import torch\nprint('from the app')\n"}
    ws.write_course(mini_course, lang="en", saved_code=saved.get)
    assert split_code((ws.root / FIX).read_text(encoding="utf-8")) == saved[
        "mini-graph/fix-scalar"
    ]


def test_unknown_lesson_is_a_clear_error(tmp_path: Path, mini_course: Course) -> None:
    with pytest.raises(WorkspaceError, match="no lesson nope") as info:
        Workspace(tmp_path).write_course(mini_course, lang="en", lesson_ids=["nope"])
    assert "mini-basics" in str(info.value)


def test_missing_and_broken_manifest(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    with pytest.raises(WorkspaceError, match="tutor start"):
        ws.load_manifest()
    (tmp_path / MANIFEST_NAME).write_text("{not json", encoding="utf-8")
    with pytest.raises(WorkspaceError, match="cannot read"):
        ws.load_manifest()
    (tmp_path / MANIFEST_NAME).write_text(json.dumps({"exercises": [{"x": 1}]}))
    with pytest.raises(WorkspaceError, match="cannot read"):
        ws.load_manifest()


def test_split_code_without_header_is_the_whole_text() -> None:
    assert split_code("x = 1\n") == "x = 1\n"
    assert split_code(f"# a\n{HEADER_END}\nx = 1\n") == "x = 1\n"


def test_a_folder_that_cannot_be_written_is_a_clear_error(
    tmp_path: Path, mini_course: Course, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `tutor start --dir /proc/x` printed a raw FileNotFoundError traceback; a full disk
    # fails the same way, at the write
    import errno
    import os

    def no_space(*_args: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr("tutor.workspace.os.replace", no_space)
    with pytest.raises(WorkspaceError) as caught:
        Workspace(tmp_path / "ex").write_course(mini_course, lang="en")
    assert "cannot write" in str(caught.value) and "--dir" in str(caught.value)
    assert os.strerror(errno.ENOSPC) in str(caught.value)


def test_the_fix_kind_has_the_name_tutor_lessons_gives_it(
    tmp_path: Path, mini_course: Course
) -> None:
    # the header said 修复错误 while `tutor lessons` says 改错
    from tutor.cli.messages import msg

    ws = Workspace(tmp_path / "ex")
    ws.write_course(mini_course, lang="zh")
    header = (ws.root / FIX).read_text(encoding="utf-8").split(HEADER_END)[0]
    assert f"({msg('lessons.fix').zh}练习, mini-graph/fix-scalar)" in header, header
    assert "修复错误" not in header


def test_quiz_files_number_the_choices_in_each_learners_order(
        tmp_path: Path, mini_course: Course) -> None:
    from tutor.course.quiz import choice_order

    ref = "mini-graph/what-stops-tracking"
    _, quiz = mini_course.find(ref)
    orders = {name: choice_order(name, ref, len(quiz.choices)) for name in ("ana", "bo", "cy")}
    assert len({tuple(order) for order in orders.values()}) > 1, "pick learners that differ"
    for name, order in orders.items():
        ws = Workspace(tmp_path / name)
        ws.write_course(mini_course, lang="zh", learner=name)
        text = (ws.root / "02-mini-graph/05-what-stops-tracking.py").read_text(encoding="utf-8")
        shown = [line for line in text.splitlines() if line.startswith("#   ")]
        assert shown == [f"#   {n}. {quiz.choices[i].text.zh}" for n, i in enumerate(order, 1)]
        assert split_code(text) == "ANSWER = []\n"
        assert "可能有多个选项正确" in text  # a multiple-choice quiz says so
        compile(text, "quiz.py", "exec")


def test_a_quiz_answered_in_the_app_is_written_with_its_picks(
        tmp_path: Path, mini_course: Course) -> None:
    ws = Workspace(tmp_path / "ex")
    ws.write_course(mini_course, lang="en", learner="ana",
                    saved_code={"mini-basics/who-tracks": "1"}.get)  # the app: position 1
    text = (ws.root / "01-mini-basics/03-who-tracks.py").read_text(encoding="utf-8")
    assert split_code(text) == "ANSWER = [2]\n"


@pytest.mark.parametrize(("code", "picked"), [
    ("ANSWER = [2]\n", [1]),
    ("ANSWER = 3\n", [2]),
    ("ANSWER = [1]\nANSWER = [3, 1]\n", [0, 2]),  # the last one counts
    ("ANSWER = []\n", "no choice picked yet"),
    ("ANSWER = [4]\n", "there is no choice 4: the choices are numbered 1 to 3"),
    ("ANSWER = [__import__('os').system('x')]\n", "must be numbers, not code"),
    ("ANSWER = ['2']\n", "must be a list of choice numbers"),
    ("answer = [2]\n", "no ANSWER = ... found"),
    ("ANSWER = [2\n", "not Python"),
])
def test_a_quiz_answer_is_read_as_data(code: str, picked: list[int] | str) -> None:
    from tutor.workspace import parse_quiz_answer

    got = parse_quiz_answer(code, 3)
    if isinstance(picked, list):
        assert got == picked
    else:
        assert not isinstance(got, list) and picked in got.en and got.zh

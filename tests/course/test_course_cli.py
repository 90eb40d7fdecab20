"""``tutor lessons`` and ``tutor schema`` through the CLI entry point."""

from __future__ import annotations

from pathlib import Path

from tutor.cli import main


def test_lessons_lists_lessons_steps_and_kinds(capsys, mini_course: Path):
    assert main(["lessons", "--lessons", str(mini_course), "--lang", "en"]) == 0
    out = capsys.readouterr().out
    for text in (
        "mini-basics",
        "mini-graph",
        "first-backward (code)",
        "fix-scalar (fix)",
        "who-tracks (quiz)",
        "grad-value (answer)",
        "intro (reading)",
        "2 lessons, 9 steps",
    ):
        assert text in out


def test_lessons_in_chinese_and_options_before_the_subcommand(capsys, mini_course: Path):
    assert main(["--lang", "zh", "--lessons", str(mini_course), "lessons"]) == 0
    out = capsys.readouterr().out
    assert "课程" in out and "first-backward（编程）" in out and "迷你课" in out


def test_lessons_on_a_broken_folder_is_one_clear_error(capsys, broken_lessons: Path):
    assert main(["lessons", "--lessons", str(broken_lessons)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("tutor: error: invalid lesson file:")
    assert "unknown_key.yaml:8:5:" in err and "Traceback" not in err


def test_lessons_on_a_missing_folder(capsys, tmp_path: Path):
    assert main(["lessons", "--lessons", str(tmp_path / "nope")]) == 2
    assert "no such folder" in capsys.readouterr().err


def test_schema_output_to_an_unwritable_place_is_a_clear_error(capsys, tmp_path: Path):
    assert main(["schema", "--output", str(tmp_path / "missing" / "x.json")]) == 2
    assert "cannot write the schema" in capsys.readouterr().err


def test_lint_missing_path_is_a_clear_error(capsys, tmp_path: Path):
    assert main(["lint", "--static-only", str(tmp_path / "nope.yaml")]) == 2
    assert "no such file or folder" in capsys.readouterr().err


def test_lint_strict_fails_on_warnings(capsys, tmp_path: Path):
    lesson = tmp_path / "01-one-hint.yaml"
    lesson.write_text(
        "id: one-hint\n"
        "title: {en: One hint, zh: 一个提示}\n"
        "steps:\n"
        "  - id: s\n"
        "    kind: code\n"
        "    title: {en: Step, zh: 步骤}\n"
        "    prompt: {en: Set x to one., zh: 令 x 为 1。}\n"
        "    solution: x = 1\n"
        "    checks: [{kind: value, expr: x}]\n"
        "    hints: [{en: Assign it., zh: 赋值即可。}]\n",
        encoding="utf-8",
    )
    assert main(["lint", "--static-only", str(lesson)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"{lesson}:10:5: warning: step 's': 1 hint(s)")
    assert out[-1] == "1 lesson, 1 step: no errors, 1 warning in 1 file"
    assert main(["lint", "--static-only", "--strict", str(lesson)]) == 1

"""Bad input: lesson files and data files built to hang, exhaust or trick the reader, and
broken progress databases. Each gets one clear message at ``path:line`` (or about the file),
fast and in bounded memory, and nothing already saved is lost."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from grading_cases import lesson_data

from tutor.course.lint import lint_paths
from tutor.course.loader import LessonError, load_lesson, load_lesson_with_positions
from tutor.progress import ProgressError, ProgressStore
from tutor.yaml_read import MAX_ALIASES, MAX_DEPTH

REPO = Path(__file__).resolve().parents[2]
VALID = textwrap.dedent("""\
    id: demo
    title: {en: Demo, zh: 演示}
    topics: [requires_grad]
    steps:
      - id: intro
        kind: reading
        title: {en: Intro, zh: 介绍}
        body: {en: Hello., zh: 你好。}
    """)


def _write(tmp_path: Path, text: str | bytes, name: str = "lesson.yaml") -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def _one_error(path: Path) -> tuple[int, int, str]:
    loaded = load_lesson_with_positions(path)
    errors = [p for p in loaded.problems if p.severity == "error"]
    assert len(errors) == 1, loaded.problems
    assert loaded.lesson is None
    with pytest.raises(LessonError, match=str(path)):
        load_lesson(path)
    return errors[0].line, errors[0].col, errors[0].message


def _billion_laughs(levels: int = 9) -> str:
    lines = ["a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for i in range(1, levels):
        name, prev = chr(ord("a") + i), chr(ord("a") + i - 1)
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 9) + "]")
    return "\n".join(lines) + "\n"


BAD_YAML = {
    "a billion laughs": (_billion_laughs(), "alias bomb"),
    "a quadratic blow-up": (
        "a: &a [" + ", ".join(["x"] * 3000) + "]\nb: [" + ", ".join(["*a"] * 90) + "]\n",
        "values once aliases"),
    "too many aliases": (
        "a: &a x\nb: [" + ", ".join(["*a"] * (MAX_ALIASES + 1)) + "]\n", "aliases"),
    "deep flow nesting": ("a: " + "[" * 5000 + "]" * 5000 + "\n", "nest"),
    "deep block nesting": (
        "".join("  " * i + f"k{i}:\n" for i in range(MAX_DEPTH + 5)) + "  " * (MAX_DEPTH + 5)
        + "v: 1\n", "nested more than"),
    "a python object tag": ("id: !!python/object/apply:os.system ['echo hi']\n", "unknown tag"),
    "a python name tag": ("id: !!python/name:os.system\n", "unknown tag"),
    "a local tag": ("id: !secret demo\n", "unknown tag"),
    "a tagged mapping": ("id: !!python/object:__main__.X {a: 1}\n", "unknown tag"),
    "a 5000-digit int": ("id: demo\nn: " + "9" * 5000 + "\n", "digits"),
    "a 5000-digit float": ("id: demo\nn: " + "9" * 5000 + ".5\n", "digits"),
    "a duplicate key": ("id: demo\nid: other\n", "duplicate key"),
    "a recursive alias": ("a: &a [1, *a]\n", "inside its own anchor"),
    "an alias to nothing": ("a: *nowhere\n", "no anchor"),
    "two documents": (VALID + "---\n" + VALID, "second YAML document"),
    "a mapping as a key": ("? [a, b]\n: c\n", "as a mapping key"),
}


@pytest.mark.parametrize("case", sorted(BAD_YAML))
def test_hostile_yaml_is_one_clear_problem_at_its_line(tmp_path: Path, case: str) -> None:
    text, words = BAD_YAML[case]
    path = _write(tmp_path, text)
    line, col, message = _one_error(path)
    assert words in message, message
    assert line >= 1 and col >= 1
    assert len(message) < 300


def test_an_alias_bomb_in_an_app_data_file_is_a_yaml_error(tmp_path: Path) -> None:
    from tutor.yaml_read import YamlFileError, read_yaml

    path = _write(tmp_path, _billion_laughs(), "catalog.yaml")
    with pytest.raises(YamlFileError, match=r"catalog.yaml:\d+:\d+: .*alias bomb"):
        read_yaml(path)


def test_a_huge_lesson_file_is_refused_unparsed(tmp_path: Path) -> None:
    path = _write(tmp_path, VALID + "# " + "x" * 3_000_000 + "\n")
    line, col, message = _one_error(path)
    assert (line, col) == (1, 1) and "at most 2 MB" in message


def test_a_bom_lesson_loads(tmp_path: Path) -> None:
    path = _write(tmp_path, "\ufeff".encode() + VALID.encode("utf-8"))
    assert load_lesson(path).id == "demo"


def test_a_lesson_that_is_not_utf8_is_a_problem(tmp_path: Path) -> None:
    path = _write(tmp_path, b"id: \xff\xfe demo\n")
    _, _, message = _one_error(path)
    assert "cannot read file" in message


def test_yaml_11_booleans_stay_text_and_lint_warns(tmp_path: Path) -> None:
    data = VALID.replace("body: {en: Hello., zh: 你好。}", "body: {en: yes, zh: 'on'}")
    path = _write(tmp_path, data)
    lesson = load_lesson(path)
    assert lesson.steps[0].body.en == "yes"  # type: ignore[union-attr]
    report = lint_paths([path])
    warnings = [p for p in report.problems if p.severity == "warning" and "YAML 1.1" in p.message]
    assert len(warnings) == 1 and warnings[0].line == 8  # the quoted 'on' is text to all


def test_tutor_lint_refuses_an_alias_bomb_quickly_without_a_traceback(tmp_path: Path) -> None:
    """The bomb hung `tutor lint` (2 GB and rising at 120 s)."""
    folder = tmp_path / "course"
    folder.mkdir()
    bomb = _write(folder, _billion_laughs(10), "01-bomb.yaml")
    env = dict(os.environ, PYTHONPATH=str(REPO), TUTOR_CACHE_DIR=str(tmp_path / "cache"))
    result = subprocess.run([sys.executable, "-m", "tutor", "lint", str(bomb)],
                            capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 1, result.stderr
    assert f"{bomb}:" in result.stdout + result.stderr
    assert "alias bomb" in result.stdout + result.stderr
    assert "Traceback" not in result.stderr


def test_the_hostile_course_itself_is_valid(tmp_path: Path) -> None:
    """The grading cases' lesson loads through the same reader (a sanity check of both)."""
    import json

    path = _write(tmp_path, json.dumps(lesson_data(), ensure_ascii=False))
    assert len(load_lesson(path).steps) == 4


# --------------------------------------------------------------------------- progress files


def _saved(path: Path) -> None:
    with ProgressStore(path) as store:
        store.record_attempt("l/s", "x = 1", passed=True, score=1, max_score=1)


def test_a_truncated_progress_file_is_a_clear_error_and_left_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "progress.sqlite3"
    _saved(path)
    data = path.read_bytes()
    path.write_bytes(data[:100])
    with pytest.raises(ProgressError) as caught, ProgressStore(path) as store:
        store.passed_steps()
    assert "progress" in str(caught.value)
    assert path.read_bytes() == data[:100]


def test_a_progress_file_from_another_program_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "progress.sqlite3"
    other = sqlite3.connect(path)
    other.execute("CREATE TABLE steps (name TEXT)")  # same table name, other columns
    other.execute("PRAGMA user_version = 1")
    other.commit()
    other.close()
    before = path.read_bytes()
    with pytest.raises(ProgressError, match="another program"), ProgressStore(path) as store:
        store.record_attempt("l/s", "x", passed=True, score=1, max_score=1)
    assert path.read_bytes() == before


def test_a_progress_path_that_is_a_folder_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "progress.sqlite3"
    path.mkdir()
    with pytest.raises(ProgressError, match="cannot open"):
        ProgressStore(path)
    assert path.is_dir() and not any(path.iterdir())


def test_a_read_only_progress_file_is_a_clear_error_on_save(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root writes read-only files")
    path = tmp_path / "progress.sqlite3"
    _saved(path)
    path.chmod(0o444)
    with pytest.raises(ProgressError), ProgressStore(path) as store:
        store.record_attempt("l/s", "y", passed=True, score=1, max_score=1)

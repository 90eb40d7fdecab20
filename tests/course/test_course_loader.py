"""Loading lessons: the mini course, positions of errors, the bundled course."""

from __future__ import annotations

import typing
from pathlib import Path

import pytest

from tutor.course import (
    LessonError,
    bundled_lessons_dir,
    load_course,
    load_lesson,
    load_lesson_with_positions,
)
from tutor.course.loader import describe_loc, model_at, resolve_loc
from tutor.course.models import AstRule, Check, CodeStep, Step, ValueCheck
from tutor.errors import TutorError
from tutor.i18n import Text
from tutor.records import field_types


def _kinds(annotated: object) -> set[str]:
    union = typing.get_args(annotated)[0]
    return {typing.get_args(field_types(m)["kind"])[0] for m in typing.get_args(union)}


ALL_STEP_KINDS = _kinds(Step)
ALL_CHECK_KINDS = _kinds(Check)


def test_mini_course_loads_in_file_order_with_every_step_and_check_kind(mini_course: Path):
    course = load_course(mini_course)
    assert [lesson.id for lesson in course.lessons] == ["mini-basics", "mini-graph"]
    kinds = {step.kind for lesson in course.lessons for step in lesson.steps}
    assert kinds == ALL_STEP_KINDS
    checks = [
        check
        for lesson in course.lessons
        for step in lesson.steps
        for check in getattr(step, "checks", [])
    ]
    assert {check.kind for check in checks} == ALL_CHECK_KINDS
    values = [c for c in checks if isinstance(c, ValueCheck)]
    assert any(c.expected is None for c in values) and any(c.expected is not None for c in values)
    rules = {c.rule for c in checks if c.kind == "ast"}
    assert rules == set(typing.get_args(AstRule))
    quizzes = [s for lesson in course.lessons for s in lesson.steps if s.kind == "quiz"]
    assert {q.multiple for q in quizzes} == {True, False}
    lesson, step = course.find("mini-graph/fix-scalar")
    assert lesson.id == "mini-graph" and step.kind == "fix"
    assert lesson.title.get("zh") != lesson.title.get("en")


def test_bundled_course_is_found_and_loads():
    directory = bundled_lessons_dir()
    assert directory.is_dir()
    files = sorted(directory.glob("*.yaml"))
    if not files:
        pytest.skip("the bundled course has no lessons yet")
    course = load_course()
    assert len(course.lessons) == len(files)


def test_non_yaml_files_in_a_course_folder_are_ignored(tmp_path: Path, mini_course: Path):
    for source in mini_course.glob("*.yaml"):
        (tmp_path / source.name).write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "README.md").write_text("# not a lesson: {\n", encoding="utf-8")
    assert len(load_course(tmp_path).lessons) == 2


def test_load_lesson_raises_lesson_error_with_every_problem(write_lesson):
    path = write_lesson(
        "id: demo\n"
        "title: {en: Demo}\n"
        "steps:\n"
        "  - id: s1\n"
        "    kind: reading\n"
        "    title: T\n"
        "    body: B\n"
        "    colour: red\n"
    )
    with pytest.raises(LessonError) as info:
        load_lesson(path)
    found = [(p.line, p.col) for p in info.value.problems]
    assert found == [(2, 1), (8, 5)]
    assert info.value.exit_code == 1
    assert f"{path}:8:5: unknown key 'colour'" in str(info.value)


def test_positions_point_at_values_and_keys(write_lesson):
    path = write_lesson(
        "id: demo\n"
        "title: Demo\n"
        "steps:\n"
        "  - id: s1\n"
        "    kind: code\n"
        "    title: T\n"
        "    prompt: P\n"
        "    solution: x = 1\n"
        "    checks:\n"
        "      - kind: value\n"
        "        expr: x\n"
        "        rtol: tiny\n"
    )
    loaded = load_lesson_with_positions(path)
    assert loaded.lesson is None
    [problem] = loaded.problems
    assert (problem.line, problem.col) == (12, 15)
    assert "steps[0].checks[0].rtol" in problem.message and "'tiny'" in problem.message
    assert loaded.locate(("steps", 0, "checks", 0, "expr")) == (11, 15)
    assert loaded.locate(("steps", 0, "checks", 0, "expr"), key=True) == (11, 9)
    assert loaded.locate(("steps", 0, "code", "solution")) == (8, 15)  # union tag skipped


def test_unknown_kind_and_missing_kind_are_located(write_lesson):
    path = write_lesson(
        "id: demo\n"
        "title: Demo\n"
        "steps:\n"
        "  - id: a\n"
        "    kind: raeding\n"
        "    title: T\n"
        "  - id: b\n"
        "    title: T\n"
    )
    problems = load_lesson_with_positions(path).problems
    assert [(p.line, p.col) for p in problems] == [(5, 11), (7, 5)]
    assert "did you mean 'reading'" in problems[0].message
    assert "missing 'kind'" in problems[1].message


def test_nested_unknown_key_suggests_from_the_right_model(write_lesson):
    path = write_lesson(
        "id: demo\n"
        "title: Demo\n"
        "steps:\n"
        "  - id: s1\n"
        "    kind: code\n"
        "    title: T\n"
        "    prompt: P\n"
        "    solution: x = 1\n"
        "    checks:\n"
        "      - kind: attribute\n"
        "        expr: x\n"
        "        atribute: is_leaf\n"
    )
    messages = [p.message for p in load_lesson_with_positions(path).problems]
    assert any("unknown key 'atribute'" in m and "did you mean 'attribute'" in m for m in messages)


def test_yaml_syntax_error_is_a_problem_not_a_traceback(write_lesson):
    path = write_lesson("id: demo\ntitle: [unclosed\nsteps: []\n")
    loaded = load_lesson_with_positions(path)
    [problem] = loaded.problems
    assert problem.message.startswith("YAML syntax error")
    assert problem.line == 3


def test_duplicate_yaml_key_is_reported(write_lesson):
    path = write_lesson("id: demo\nid: other\ntitle: Demo\nsteps: []\n")
    [problem] = load_lesson_with_positions(path).problems
    assert problem.line == 2 and "duplicate" in problem.message


def test_empty_file_and_non_mapping_root(write_lesson):
    empty = load_lesson_with_positions(write_lesson("# nothing\n", "empty.yaml"))
    assert "empty" in empty.problems[0].message
    listed = load_lesson_with_positions(write_lesson("- id: demo\n", "list.yaml"))
    assert (listed.problems[0].line, listed.problems[0].col) == (1, 1)


def test_load_course_reports_duplicate_lesson_ids_across_files(tmp_path: Path):
    text = "id: same\ntitle: Same\nsteps:\n  - {id: a, kind: reading, title: T, body: B}\n"
    (tmp_path / "01-a.yaml").write_text(text, encoding="utf-8")
    (tmp_path / "02-b.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(LessonError) as info:
        load_course(tmp_path)
    [problem] = info.value.problems
    assert problem.path.name == "02-b.yaml" and (problem.line, problem.col) == (1, 5)
    assert "01-a.yaml:1" in problem.message


def test_load_course_errors_for_missing_or_empty_folder(tmp_path: Path):
    with pytest.raises(TutorError, match="no such folder"):
        load_course(tmp_path / "nope")
    with pytest.raises(TutorError, match="no lesson files"):
        load_course(tmp_path)


def test_resolve_and_describe_loc_skip_union_tags():
    data = {"steps": [{"kind": "code", "checks": [{"kind": "value", "expr": "x"}]}]}
    loc = ("steps", 0, "code", "checks", 0, "value", "expr")
    assert resolve_loc(data, loc) == ("steps", 0, "checks", 0, "expr")
    assert describe_loc(data, loc) == "steps[0].checks[0].expr"
    assert resolve_loc(data, ("steps", 3, "code", "id")) == ("steps",)


def test_model_at_follows_lists_unions_and_texts():
    assert model_at(("steps", 0, "code")) is CodeStep
    assert model_at(("steps", 0, "code", "checks", 1, "value")) is ValueCheck
    assert model_at(("title",)) is Text
    assert model_at(("steps", 0, "code", "hints", 0)) is Text


def test_load_course_rejects_duplicate_step_ids(tmp_path: Path, broken_lessons: Path):
    (tmp_path / "01-dup.yaml").write_text(
        (broken_lessons / "duplicate_id.yaml").read_text(encoding="utf-8"), encoding="utf-8"
    )
    with pytest.raises(LessonError) as info:
        load_course(tmp_path)
    [problem] = info.value.problems
    assert (problem.line, problem.col) == (8, 9) and "duplicate step id 'intro'" in problem.message


def test_a_non_mapping_file_is_explained_in_lesson_words(write_lesson):
    # `tutor lint notes.py` said "Input should be a valid dictionary or instance of Lesson"
    listed = load_lesson_with_positions(write_lesson("- id: demo\n", "list.yaml"))
    assert "a lesson is a mapping" in listed.problems[0].message
    assert "holds a list" in listed.problems[0].message
    script = load_lesson_with_positions(write_lesson("print(1)\n", "notes.py"))
    assert "valid dictionary" not in script.problems[0].message
    assert "lessons are *.yaml" in script.problems[0].message


def test_lessons_pointing_at_a_file_says_so(tmp_path: Path):
    # `tutor --lessons lesson.yaml` said "no such folder" about a file that exists
    lesson = tmp_path / "01-a.yaml"
    lesson.write_text("id: a\n", encoding="utf-8")
    with pytest.raises(TutorError, match="a file, not a folder of lessons"):
        load_course(lesson)


def test_a_wrong_value_is_explained_in_chinese_too(tmp_path: Path) -> None:
    """pydantic words its errors in English; the Chinese problem line says them in Chinese
    (by the error's type, tutor.validation_zh), not in English inside a Chinese sentence."""
    from tutor.course import load_lesson_with_positions

    source = Path(__file__).parents[1] / "fixtures" / "mini_course" / "01-mini-basics.yaml"
    text = source.read_text(encoding="utf-8").replace(
        "    kind: reading\n    title:", "    kind: reading\n    hints: 3\n    title:", 1)
    path = tmp_path / "01-bad.yaml"
    path.write_text(text, encoding="utf-8")
    [problem] = load_lesson_with_positions(path).problems
    assert problem.said("en") == "steps[0].hints: Input should be a valid list (got 3)"
    assert problem.said("zh") == "steps[0].hints：应为列表（实际是 3）"

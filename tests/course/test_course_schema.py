"""The JSON Schema from ``tutor schema`` accepts every real lesson and rejects broken ones."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from ruamel.yaml import YAML

from tutor.course import bundled_lessons_dir
from tutor.course.schema import SCHEMA_FILE_NAME, lesson_json_schema, lesson_json_schema_text

REPO = Path(__file__).resolve().parents[2]
LESSON_FILES = sorted(bundled_lessons_dir().glob("*.yaml")) + sorted(
    (REPO / "tests" / "fixtures" / "mini_course").glob("*.yaml")
)


def _data(path: Path) -> object:
    # Another reader than the loader's (tutor.yaml_read), so the schema is checked against
    # the YAML as such: ruamel's pure-Python parser (its libyaml one, ruamel.yaml.clib,
    # stops at "{en: Which is true?, zh: ...}").
    return YAML(typ="safe", pure=True).load(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def validator() -> jsonschema.protocols.Validator:
    schema = lesson_json_schema()
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def test_schema_has_dialect_title_and_description():
    schema = lesson_json_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["title"] and schema["description"]
    assert schema["additionalProperties"] is False
    assert set(schema["required"]) == {"id", "title", "steps"}


@pytest.mark.parametrize("path", LESSON_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_lesson_validates_against_the_schema(path: Path, validator):
    errors = [error.message for error in validator.iter_errors(_data(path))]
    assert errors == []


def test_cli_schema_output_is_what_validates(tutor_cli, tmp_path: Path, mini_course: Path):
    printed = tutor_cli("schema")
    assert printed.returncode == 0, printed.stderr
    schema = json.loads(printed.stdout)
    out = tmp_path / "lesson.schema.json"
    written = tutor_cli("schema", "--output", str(out))
    assert written.returncode == 0 and written.stdout == ""
    assert json.loads(out.read_text(encoding="utf-8")) == schema
    validator = jsonschema.Draft202012Validator(schema)
    for path in [*sorted(bundled_lessons_dir().glob("*.yaml")), *mini_course.glob("*.yaml")]:
        assert list(validator.iter_errors(_data(path))) == [], path


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("unknown_key.yaml", "hnits"),
        ("wrong_type.yaml", "sometimes"),
        ("missing_translation.yaml", "zh"),
    ],
)
def test_schema_rejects_broken_lessons(validator, broken_lessons: Path, name: str, fragment: str):
    errors = list(validator.iter_errors(_data(broken_lessons / name)))
    assert errors
    assert any(fragment in str(error) for error in errors)


def test_plain_string_and_translated_text_are_both_valid(validator):
    lesson = {
        "id": "demo",
        "title": "x.grad",
        "steps": [{"id": "a", "kind": "reading", "title": {"en": "A", "zh": "甲"}, "body": "B"}],
    }
    assert list(validator.iter_errors(lesson)) == []
    lesson["steps"][0]["title"] = {"en": "A"}
    assert list(validator.iter_errors(lesson))


def test_committed_schema_file_is_up_to_date():
    committed = Path(__file__).resolve().parents[2] / "tutor" / "course" / SCHEMA_FILE_NAME
    assert committed.read_text(encoding="utf-8") == lesson_json_schema_text(), (
        "regenerate it: tutor schema --output tutor/course/lesson.schema.json"
    )

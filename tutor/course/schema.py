"""The JSON Schema of a lesson file, derived by pydantic from the lesson models, never by hand.

Editors use it to validate and complete lesson YAML as it is typed: put
``# yaml-language-server: $schema=<path or URL of the schema>`` on the first line of a lesson.
"""

from __future__ import annotations

import json
from typing import Any

from tutor.course.models import Lesson

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_FILE_NAME = "lesson.schema.json"
"""Written next to this module (``tutor/course/lesson.schema.json``) for editors; a test
keeps it equal to what ``tutor schema`` prints."""


def lesson_json_schema() -> dict[str, Any]:
    """The schema of one lesson file, with ``$schema``, ``title`` and ``description``."""
    schema = Lesson.model_json_schema()
    head = {
        "$schema": JSON_SCHEMA_DIALECT,
        "title": "autograd-tutor lesson",
        "description": (
            "One lesson of autograd-tutor: one YAML file in lessons/. Texts are a plain "
            "string (the same in both languages) or {en: ..., zh: ...}. Generated from the "
            "pydantic models by `tutor schema`."
        ),
    }
    rest = {key: value for key, value in schema.items() if key not in head}
    return {**head, **rest}


def lesson_json_schema_text() -> str:
    """The schema as stable, pretty JSON (what ``tutor schema`` prints)."""
    return json.dumps(lesson_json_schema(), indent=2, ensure_ascii=False) + "\n"

"""Loading lesson YAML into validated models, keeping the line and column of every node.

Validation errors are reported as :class:`Problem` s that point at the ``path:line:col`` of
the offending key or value, so authors can jump straight to it. The position map built
while loading (pydantic ``loc`` tuple -> position) is kept for the linter.
"""

from __future__ import annotations

import contextlib
import difflib
import types
import typing
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Union

from tutor.course.cache import cached_lesson, store_lesson
from tutor.course.messages import msg
from tutor.course.models import Course, Lesson
from tutor.errors import TutorError
from tutor.i18n import Lang, Text
from tutor.paths import bundled_lessons_dir
from tutor.records import Record, field_types, is_record
from tutor.validation_zh import zh_message
from tutor.yaml_read import MAX_BYTES, YamlProblem, decode
from tutor.yaml_read import parse as parse_yaml

if TYPE_CHECKING:
    from pydantic import ValidationError

Loc = tuple[str | int, ...]
"""A path into the lesson data: mapping keys and list indices, as in pydantic's ``loc``."""

Severity = Literal["error", "warning"]

LESSON_SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True, order=True)
class Problem:
    """One thing wrong with a lesson file, at a 1-based line and column."""

    path: Path
    line: int
    col: int
    message: str
    """In English; ``text`` holds both languages."""
    severity: Severity = "error"
    text: Text | None = field(default=None, compare=False)

    @classmethod
    def of(cls, path: Path, line: int, col: int, text: Text,
           severity: Severity = "error") -> Problem:
        """A problem whose message exists in both languages."""
        return cls(path, line, col, text.en, severity, text)

    def said(self, lang: Lang = "en") -> str:
        """The message in ``lang``."""
        return self.text.get(lang) if self.text is not None else self.message

    def format(self, display_path: str | None = None, lang: Lang = "en") -> str:
        where = f"{display_path if display_path is not None else self.path}:{self.line}:{self.col}"
        prefix = msg("warning_prefix").get(lang) if self.severity == "warning" else ""
        return f"{where}: {prefix}{self.said(lang)}"


class LessonError(TutorError):
    """A lesson file (or several) that cannot be loaded; ``problems`` says where and why."""

    exit_code = 1

    def __init__(self, problems: Sequence[Problem]):
        self.problems = sorted(problems)

        def said(lang: Lang) -> str:
            lines = [msg("invalid_lessons").get(lang)]
            lines += [problem.format(lang=lang) for problem in self.problems[:20]]
            if len(self.problems) > 20:
                lines.append(msg("more_problems", count=len(self.problems) - 20).get(lang))
            return "\n".join(lines)

        super().__init__(Text(en=said("en"), zh=said("zh")), hint=msg("lint_for_every_problem"))


@dataclass(frozen=True)
class Position:
    """Where a node starts (1-based). ``key`` is where the key naming it starts, if any."""

    line: int
    col: int
    key_line: int | None = None
    key_col: int | None = None

    @property
    def at_key(self) -> tuple[int, int]:
        if self.key_line is not None and self.key_col is not None:
            return self.key_line, self.key_col
        return self.line, self.col

    @property
    def at_value(self) -> tuple[int, int]:
        return self.line, self.col


@dataclass
class LoadedLesson:
    """A lesson file as loaded: the raw data, node positions, and the model if it is valid."""

    path: Path
    text: str
    data: Any
    positions: dict[Loc, Position] = field(default_factory=dict)
    lesson: Lesson | None = None
    problems: list[Problem] = field(default_factory=list)

    def locate(self, loc: Sequence[str | int], *, key: bool = False) -> tuple[int, int]:
        """The position of the deepest node of ``loc`` present in the file.

        ``loc`` may be a pydantic error location: union tags in it (such as a step's
        ``kind``) are skipped. With ``key``, a mapping entry is located at its key.
        """
        found = resolve_loc(self.data, loc)
        pos = self.positions.get(found) or self.positions.get(()) or Position(1, 1)
        return pos.at_key if key else pos.at_value

    def problem(
        self,
        loc: Sequence[str | int],
        message: str | Text,
        *,
        key: bool = False,
        severity: Severity = "error",
    ) -> Problem:
        line, col = self.locate(loc, key=key)
        if isinstance(message, Text):
            return Problem.of(self.path, line, col, message, severity)
        return Problem(self.path, line, col, message, severity)


# --------------------------------------------------------------------------- finding lessons


def lesson_files(directory: Path) -> list[Path]:
    """The lesson files of a course folder, in name order (other files are ignored)."""
    if not directory.is_dir():
        what = "not_a_lesson_folder" if directory.exists() else "no_lesson_folder"
        raise TutorError(msg(what, folder=str(directory)), hint=msg("pass_a_lesson_folder"))
    return sorted(p for p in directory.iterdir() if p.is_file() and p.suffix in LESSON_SUFFIXES)


# --------------------------------------------------------------------------- loading


def _syntax_message(problem: YamlProblem, text: str) -> Text:
    """libyaml's words for a syntax error, as authors have read them ("not allowed here"),
    with the hint for the commonest cause, a tab in the indentation."""
    what = problem.syntax or ""
    message = msg("yaml_syntax", what=what.replace(" in this context", " here"))
    lines = text.splitlines()
    line = lines[problem.line - 1] if 0 < problem.line <= len(lines) else ""
    if "\t" in line[: problem.col] or "found character '\\t'" in what:
        message += msg("yaml_tabs")
    return message


def parse_lesson_file(path: Path) -> LoadedLesson:
    """Read and parse one file; YAML syntax errors, files over the size cap and data past
    the reader's limits (alias bombs, deep nesting, unknown tags, huge numbers) become
    problems at ``path:line:col`` (no validation yet). A UTF-8 BOM is accepted."""
    path = Path(path)
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_BYTES + 1)
        text = decode(raw)
    except FileNotFoundError:
        raise TutorError(msg("no_lesson_file", path=str(path))) from None
    except YamlProblem as problem:
        loaded = LoadedLesson(path=path, text="", data=None)
        loaded.problems.append(Problem.of(path, 1, 1, msg("cannot_read", error=problem.text)))
        return loaded
    except (OSError, UnicodeDecodeError) as exc:
        loaded = LoadedLesson(path=path, text="", data=None)
        loaded.problems.append(Problem.of(path, 1, 1, msg("cannot_read", error=exc)))
        return loaded
    loaded = LoadedLesson(path=path, text=text, data=None)
    try:
        parsed = parse_yaml(text)
    except YamlProblem as problem:
        message = _syntax_message(problem, text) if problem.syntax is not None else problem.text
        loaded.problems.append(Problem.of(path, problem.line, problem.col, message))
        return loaded
    loaded.positions = {
        loc: Position(*where) for loc, where in parsed.positions.items()
    }
    loaded.positions.setdefault((), Position(1, 1))
    loaded.data = parsed.data
    loaded.problems += [
        Problem.of(path, line, col, text_, "warning") for line, col, text_ in parsed.warnings
    ]
    return loaded


def errors_of(loaded: LoadedLesson) -> list[Problem]:
    return [problem for problem in loaded.problems if problem.severity == "error"]


def load_lesson_with_positions(path: Path) -> LoadedLesson:
    """Parse and validate one file. Never raises for a broken lesson: see ``.problems``."""
    loaded = parse_lesson_file(path)
    if errors_of(loaded):
        return loaded
    if loaded.data is None:
        loaded.problems.append(
            Problem.of(loaded.path, 1, 1, msg("empty_file"))
        )
        return loaded
    if not isinstance(loaded.data, dict):
        # pydantic would say "Input should be a valid dictionary or instance of Lesson"
        found = msg("found_list" if isinstance(loaded.data, list) else "found_text")
        suffix = "" if loaded.path.suffix in LESSON_SUFFIXES else (
            msg("not_yaml_suffix", suffix=loaded.path.suffix))
        loaded.problems.append(Problem.of(
            loaded.path, 1, 1, msg("not_a_mapping", found=found, suffix=suffix)))
        return loaded
    from pydantic import ValidationError  # only where YAML is validated: not on start-up

    try:
        loaded.lesson = Lesson.model_validate(loaded.data)
    except ValidationError as exc:
        loaded.problems.extend(validation_problems(loaded, exc))
    return loaded


def load_lesson(path: Path) -> Lesson:
    """Load one lesson file; raises :class:`LessonError` with every problem found."""
    loaded = load_lesson_with_positions(path)
    if errors_of(loaded) or loaded.lesson is None:
        raise LessonError(errors_of(loaded))
    return loaded.lesson


def load_course(directory: Path | None = None) -> Course:
    """Load every ``*.yaml`` lesson in ``directory`` (default: the bundled course), in name
    order. Raises :class:`LessonError` listing the problems of every broken file, and for
    two lessons with the same id."""
    directory = Path(directory) if directory is not None else bundled_lessons_dir()
    files = lesson_files(directory)
    if not files:
        raise TutorError(msg("no_lesson_files", folder=str(directory)),
                         hint=msg("pass_lessons_dir"))
    cached = _cached_course(files)
    if cached is not None:
        return cached
    problems: list[Problem] = []
    lessons: list[Lesson] = []
    first_seen: dict[str, LoadedLesson] = {}
    for path in files:
        loaded = load_lesson_with_positions(path)
        problems.extend(errors_of(loaded))  # warnings are lint's to show
        if loaded.lesson is None:
            continue
        other = first_seen.get(loaded.lesson.id)
        if other is not None:
            problems.append(duplicate_lesson_problem(loaded, other))
            continue
        first_seen[loaded.lesson.id] = loaded
        lessons.append(loaded.lesson)
        problems.extend(duplicate_step_problems(loaded))
    if problems:
        raise LessonError(problems)
    for path, lesson in zip(files, lessons, strict=True):
        with contextlib.suppress(OSError):
            store_lesson(path.read_bytes(), lesson)
    return Course(lessons=lessons)


def _cached_course(files: Sequence[Path]) -> Course | None:
    """The course from the lesson cache when every file is cached and the ids are unique;
    otherwise None, and the slow path finds (and places) any problem."""
    lessons: list[Lesson] = []
    for path in files:
        try:
            lesson = cached_lesson(path.read_bytes())
        except OSError:
            return None
        if lesson is None:
            return None
        lessons.append(lesson)
    if len({lesson.id for lesson in lessons}) != len(lessons):
        return None
    return Course(lessons=lessons)


def duplicate_step_problems(loaded: LoadedLesson) -> list[Problem]:
    """Step ids repeated within a lesson (``LESSON/STEP`` references must be unique)."""
    problems: list[Problem] = []
    if loaded.lesson is None:
        return problems
    first: dict[str, int] = {}
    for index, step in enumerate(loaded.lesson.steps):
        if step.id not in first:
            first[step.id] = index
            continue
        line, _ = loaded.locate(("steps", first[step.id], "id"))
        problems.append(
            loaded.problem(
                ("steps", index, "id"), msg("duplicate_step", step=step.id, line=line)
            )
        )
    return problems


def duplicate_lesson_problem(loaded: LoadedLesson, other: LoadedLesson) -> Problem:
    line, _ = other.locate(("id",))
    lesson_id = loaded.lesson.id if loaded.lesson else "?"
    return loaded.problem(
        ("id",), msg("duplicate_lesson", lesson=lesson_id, where=f"{other.path}:{line}")
    )


# --------------------------------------------------------------------------- locations


def _has(node: Any, part: str | int) -> bool:
    """Whether ``node[part]`` is a key of a mapping or an index of a list."""
    if isinstance(node, dict):
        return part in node
    return isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)


def resolve_loc(data: Any, loc: Sequence[str | int]) -> Loc:
    """The longest prefix of ``loc`` that exists in ``data``, with union tags dropped."""
    found: list[str | int] = []
    node = data
    parts = list(loc)
    i = 0
    while i < len(parts):
        part = parts[i]
        if _has(node, part):
            node = node[part]
            found.append(part)
        elif isinstance(node, dict) and isinstance(part, str) and i + 1 < len(parts):
            pass  # a union tag such as the step kind 'code' in ('steps', 0, 'code', 'id')
        else:
            break
        i += 1
    return tuple(found)


def describe_loc(data: Any, loc: Sequence[str | int]) -> str:
    """``steps[2].checks[0].expr`` for a pydantic loc (tags dropped), for messages."""
    out = ""
    node = data
    tag_seen = False  # pydantic puts the union tag (the kind) first, once per node
    for part in loc:
        if (isinstance(node, dict) and not tag_seen and isinstance(part, str)
                and part == node.get("kind")):
            # before the key lookup: a check `{kind: value, value: 2}` must not read the
            # tag 'value' as its key (the path would repeat it)
            tag_seen = True
            continue
        tag_seen = False
        if isinstance(node, list) and isinstance(part, int):
            out += f"[{part}]"
            node = node[part] if 0 <= part < len(node) else None
        elif isinstance(node, dict) and part in node:
            out += f".{part}" if out else str(part)
            node = node[part]
        else:
            out += f".{part}" if out else str(part)
            node = None
    return out or "(top level)"


# --------------------------------------------------------------------------- validation errors


def _unwrap(tp: Any) -> list[Any]:
    """The concrete alternatives of a field type: Annotated/Optional/Union flattened."""
    while typing.get_origin(tp) is typing.Annotated:
        tp = typing.get_args(tp)[0]
    origin = typing.get_origin(tp)
    if origin is Union or origin is types.UnionType:
        out: list[Any] = []
        for arg in typing.get_args(tp):
            if arg is not type(None):
                out.extend(_unwrap(arg))
        return out
    return [tp]


def _kind_of(model: type[Record]) -> str | None:
    args = typing.get_args(field_types(model).get("kind"))
    return args[0] if args else None


def model_at(loc: Sequence[str | int], root: type[Record] = Lesson) -> type[Record] | None:
    """The model class that the node at a pydantic ``loc`` is validated as (tags included)."""
    candidates: list[Any] = [root]
    for part in loc:
        models = [c for c in candidates if is_record(c)]
        if len(models) > 1 and isinstance(part, str):
            tagged = [m for m in models if _kind_of(m) == part]
            if tagged:
                candidates = tagged
                continue
        if isinstance(part, int):
            nxt: list[Any] = []
            for c in candidates:
                if typing.get_origin(c) in (list, tuple):
                    nxt.extend(_unwrap(typing.get_args(c)[0]))
            candidates = nxt
            continue
        nxt = []
        for m in models:
            tp = field_types(m).get(part)
            if tp is not None:
                nxt.extend(_unwrap(tp))
        candidates = nxt
        if not candidates:
            return None
    models = [c for c in candidates if is_record(c)]
    return models[0] if len(models) == 1 else None


UNKNOWN_KEY_ERRORS = ("unexpected_keyword_argument", "extra_forbidden")
"""pydantic's error types for a key a model does not have (a record's, a model's)."""

KEY_OF_FIELD = {"starters": "starter"}
"""Model fields an author writes under another key."""

KEY_SYNONYMS = {
    "value": "expected", "expect": "expected", "answer": "expected", "result": "expected",
    "hint": "hints", "check": "checks", "type": "kind", "code": "solution",
    "tolerance": "atol", "description": "prompt", "text": "prompt", "question": "prompt",
}
"""Keys an author plausibly means by another word (`value:` on a value check is `expected:`);
used only when the right key is allowed there and spelling finds nothing closer."""


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` in English, or ""; :func:`did_you_mean_text` has both."""
    return did_you_mean_text(word, choices).en


def did_you_mean_text(word: str, choices: Iterable[str]) -> Text:
    options = list(choices)
    match = difflib.get_close_matches(word, options, n=1, cutoff=0.6)
    if not match and KEY_SYNONYMS.get(word) in options:
        match = [KEY_SYNONYMS[word]]
    return msg("did_you_mean", word=match[0]) if match else Text(en="", zh="")


def _what(data: Any, loc: Sequence[str | int]) -> Text:
    """A short name for the node at ``loc`` ('code step 'grad-of-x'', 'check #1', ...)."""
    where = describe_loc(data, loc)
    # zh: a space between the quoted path and the Chinese that follows it
    return Text(en=f"'{where}'", zh=f"'{where}' ") if where != "(top level)" else msg("the_lesson")


def validation_problems(loaded: LoadedLesson, exc: ValidationError) -> list[Problem]:
    """Turn pydantic errors into author-facing problems at the right line and column."""
    problems: list[Problem] = []
    seen: set[tuple[int, int, str]] = set()
    for error in exc.errors(include_url=False):
        loc = tuple(error["loc"])
        kind = error["type"]
        where = describe_loc(loaded.data, loc)
        key = False
        if kind in UNKNOWN_KEY_ERRORS:
            name = str(loc[-1])
            model = model_at(loc[:-1])
            # the YAML key `starter` fills the field `starters` (both languages)
            allowed = sorted(KEY_OF_FIELD.get(f, f) for f in field_types(model)) if model else []
            hint = did_you_mean_text(name, allowed)
            path = describe_loc(loaded.data, loc[:-1])
            parent = Text(en=path, zh=f"{path} ") if loc[:-1] else msg("the_lesson")
            message = msg("unknown_key", name=name, parent=parent, hint=hint)
            if allowed and not hint.en:
                message += msg("allowed_keys", keys=", ".join(allowed))
            key = True
        elif kind == "missing":
            name = str(loc[-1])
            parent_loc = loc[:-1]
            model = model_at(parent_loc)
            if model is not None and model.__name__ == "Text":
                message = msg("missing_text", where=describe_loc(loaded.data, parent_loc),
                              name=name)
            else:
                message = msg("missing_key", name=name, parent=_what(loaded.data, parent_loc))
            key = True
        elif kind == "union_tag_invalid":
            ctx = error.get("ctx", {})
            tag = str(ctx.get("tag", ""))
            expected = str(ctx.get("expected_tags", ""))
            tags = [t.strip().strip("'") for t in expected.split(",")]
            loc = (*loc, "kind")
            message = msg("unknown_kind", where=where, tag=tag,
                          hint=did_you_mean_text(tag, tags), expected=expected)
        elif kind == "union_tag_not_found":
            ctx = error.get("ctx", {})
            name = str(ctx.get("discriminator", "kind")).strip("'")
            message = msg("missing_discriminator", where=where, name=name)
            key = True
        else:
            given = error.get("input")
            shown = repr(given) if isinstance(given, (str, int, float, bool)) else None
            got = msg("got_value", value=shown) if shown is not None and len(shown) <= 60 else ""
            said = Text(en=str(error["msg"]), zh=zh_message(error))  # pydantic's, by type
            message = msg("invalid_value", where=where, error=said, got=got)
        line, col = loaded.locate(loc, key=key)
        marker = (line, col, message.en)
        if marker in seen:
            continue
        seen.add(marker)
        problems.append(Problem.of(loaded.path, line, col, message))
    return problems

"""Exercise files for learners who use their own editor (``tutor start`` / ``watch`` / ``verify``).

A workspace is a folder of Python files, one per code, fix-the-bug or quiz step, named so
they sort in course order (``NN-<lesson>/MM-<step>.py``, numbered as in the course so a
step's number matches the TUI's), each with the prompt as a comment header and the starter
code. A quiz's file lists its choices, numbered in the learner's own order (the order the
app shows them in, :func:`tutor.course.quiz.choice_order`), and the learner answers with
``ANSWER = [n]`` below the header. Answer steps are not written: the app asks them.

A JSON manifest (:data:`MANIFEST_NAME`) maps files to ``LESSON/STEP`` references and keeps
the sha256 of what was written, so a later ``tutor start`` rewrites only files the learner
has not changed and says which it kept.

This module only knows lessons and files; :mod:`tutor.learning.exercises` grades them
through the learning session.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tutor import syntax_tree
from tutor.course.models import CodeStep, Course, FixStep, Lesson, QuizStep
from tutor.errors import TutorError
from tutor.i18n import Catalog, Lang, T, Text

MANIFEST_NAME = ".tutor-exercises.json"
MANIFEST_VERSION = 1

HEADER_END = "# " + "=" * 72
"""Last line of the comment header; the learner's code starts below it. Language-neutral
so a file written in one language is still understood after switching."""

WRITTEN_KINDS = ("code", "fix", "quiz")
"""Step kinds that become files; answer and reading steps stay in the app."""
ANSWER_NAME = "ANSWER"
QUIZ_STARTER = f"{ANSWER_NAME} = []\n"
"""A quiz file's code before the learner answers."""
FileStep = CodeStep | FixStep | QuizStep
"""The kinds of step a workspace has files for."""

msg = Catalog(Path(__file__).with_name("workspace_messages.yaml"))
"""The exercise files' own words: ``msg("key", name=...)``."""


class WorkspaceError(TutorError):
    """The exercise folder is missing, unreadable, or its manifest is broken."""


@contextmanager
def _writing(path: Path) -> Iterator[None]:
    """A folder that cannot be created or written (a typo'd --dir, no permission, a full
    disk) is the user's to fix: one message, not a traceback."""
    try:
        yield
    except OSError as exc:
        reason = exc.strerror or exc
        raise WorkspaceError(
            T(f"cannot write {path}: {reason}", f"无法写入 {path}：{reason}"),
            hint=T("pass --dir with a folder you can write to",
                   "用 --dir 指定一个你能写入的文件夹"),
        ) from exc


class ExerciseEntry(BaseModel):
    """One exercise file and the step it belongs to."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    ref: str = Field(description="'LESSON/STEP'")
    kind: Literal["code", "fix", "quiz"]
    path: str = Field(description="Relative to the workspace, with '/' separators.")
    sha256: str | None = Field(
        None, description="Hash of what tutor wrote; None for a file tutor did not write."
    )
    seen_sha256: str | None = Field(
        None,
        description="Hash of the text tutor last wrote or graded: a save that leaves the file "
        "so is not graded again, and `tutor verify` records an attempt only for a text not seen.",
    )

    @property
    def lesson_id(self) -> str:
        return self.ref.partition("/")[0]

    @property
    def step_id(self) -> str:
        return self.ref.partition("/")[2]


class Manifest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: int = MANIFEST_VERSION
    lang: Lang = "en"
    lessons_dir: str | None = Field(
        None, description="Course the files came from; None for the bundled course."
    )
    exercises: list[ExerciseEntry] = Field(default_factory=list)

    def entry(self, ref: str) -> ExerciseEntry | None:
        for entry in self.exercises:
            if entry.ref == ref:
                return entry
        return None


class WriteReport(BaseModel):
    """What ``tutor start`` did, file by file (relative paths)."""

    model_config = ConfigDict(extra="forbid")

    written: list[str] = Field(default_factory=list, description="New files.")
    updated: list[str] = Field(
        default_factory=list, description="Untouched by the learner; rewritten (e.g. language)."
    )
    unchanged: list[str] = Field(default_factory=list, description="Already up to date.")
    kept: list[str] = Field(
        default_factory=list, description="Changed by the learner: left exactly as they were."
    )
    not_written: list[str] = Field(
        default_factory=list, description="Refs of answer steps (done in the app)."
    )


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def exercise_path(lesson_no: int, lesson_id: str, step_no: int, step_id: str) -> str:
    """``NN-<lesson>/MM-<step>.py``; numbers are 1-based positions in the course."""
    return f"{lesson_no:02d}-{lesson_id}/{step_no:02d}-{step_id}.py"


def _comment(text: str) -> list[str]:
    return [f"# {line}".rstrip() for line in text.strip().splitlines()] or ["#"]


def render_exercise(
    lesson: Lesson, step: FileStep, step_no: int, lang: Lang, code: str,
    order: list[int] | None = None,
) -> str:
    """The full text of an exercise file: comment header, marker line, then ``code``.
    A quiz's header lists its choices, numbered in ``order`` (lesson indices, as the
    learner sees them; default: the lesson's)."""
    hints = (msg("hints", n=len(step.hints)) if step.hints else msg("no_hints")).get(lang)
    lines = [
        f"# autograd-tutor · {lesson.title.get(lang)}",
        f"# {step_no}. {step.title.get(lang)}  ({msg(f'kind.{step.kind}').get(lang)}, "
        f"{lesson.id}/{step.id})",
        "#",
        *_comment(step.prompt.get(lang)),
        "#",
    ]
    how, below = msg("how"), msg("below")
    if isinstance(step, QuizStep):
        for number, index in enumerate(order or range(len(step.choices)), 1):
            text = step.choices[index].text.get(lang).strip().splitlines() or [""]
            lines.append(f"#   {number}. {text[0]}".rstrip())
            lines += [f"#      {more}".rstrip() for more in text[1:]]
        lines += ["#", f"# {msg('pick_all' if step.multiple else 'pick_one').get(lang)}"]
        how, below = msg("quiz_how"), msg("below_answer")
    lines += [f"# {hints}", f"# {how.get(lang)}", f"# {below.get(lang)}", HEADER_END]
    body = code if code.endswith("\n") or not code else code + "\n"
    return "\n".join(lines) + "\n" + body


def quiz_order(step: object, ref: str, learner: str | None) -> list[int] | None:
    """A quiz's choices in ``learner``'s order, as the app shows them (None: not a quiz,
    or no learner: the lesson's order)."""
    if not isinstance(step, QuizStep) or learner is None:
        return None
    from tutor.course.quiz import choice_order

    return choice_order(learner, ref, len(step.choices))


def starter_of(step: FileStep, lang: Lang) -> str:
    return QUIZ_STARTER if isinstance(step, QuizStep) else step.starter_for(lang)


def is_starter_of(step: FileStep, code: str) -> bool:
    if isinstance(step, QuizStep):
        return code.strip() == QUIZ_STARTER.strip()
    return step.is_starter(code)


def answer_code(positions: Iterable[int]) -> str:
    """A quiz file's code for the choices at ``positions`` (0-based, as shown)."""
    return f"{ANSWER_NAME} = [{', '.join(str(p + 1) for p in positions)}]\n"


def parse_quiz_answer(code: str, choices: int) -> list[int] | Text:
    """The positions (0-based, as shown) a quiz file's ``ANSWER`` picks, or why there are
    none: read as data (the last ``ANSWER = ...`` at top level), never run."""
    import ast

    how = T(f"write the numbers of your answer: {ANSWER_NAME} = [number, ...]",
            f"请写出答案的编号：{ANSWER_NAME} = [编号, ...]")
    try:
        tree = syntax_tree.parse(code)
    except SyntaxError as exc:
        return T(f"line {exc.lineno}: not Python ({exc.msg}); ", f"第 {exc.lineno} 行不是有效的 "
                 f"Python（{exc.msg}）；") + how
    values = [node.value for node in tree.body if isinstance(node, ast.Assign)
              and any(isinstance(t, ast.Name) and t.id == ANSWER_NAME for t in node.targets)]
    if not values:
        return T(f"no {ANSWER_NAME} = ... found; ", f"没有找到 {ANSWER_NAME} = ...；") + how
    try:
        value = ast.literal_eval(values[-1])
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return T(f"{ANSWER_NAME} must be numbers, not code; ",
                 f"{ANSWER_NAME} 只能是编号，不能是代码；") + how
    numbers = [value] if isinstance(value, int) else list(value) if isinstance(
        value, (list, tuple, set)) else None
    if numbers is None or not all(type(n) is int for n in numbers):
        return T(f"{ANSWER_NAME} must be a list of choice numbers; ",
                 f"{ANSWER_NAME} 必须是选项编号组成的列表；") + how
    if not numbers:
        return T("no choice picked yet; ", "还没有选择任何选项；") + how
    wrong = [n for n in numbers if not 1 <= n <= choices]
    if wrong:
        return T(f"there is no choice {wrong[0]}: the choices are numbered 1 to {choices}",
                 f"没有选项 {wrong[0]}：选项的编号是 1 到 {choices}")
    return sorted({n - 1 for n in numbers})


def listed_order(text: str, step: QuizStep) -> list[int] | None:
    """The lesson indices of a quiz's choices in the order its file lists them (the order
    its learner saw), read off the header's ``#   N. text`` lines in either language; None
    when the file does not list each choice once (then its numbers mean nothing)."""
    import re

    firsts: dict[str, int] = {}
    for index, choice in enumerate(step.choices):
        for lang in ("en", "zh"):
            first = (choice.text.get(lang).strip().splitlines() or [""])[0].strip()
            if firsts.setdefault(first, index) != index:
                return None  # two choices start alike: a listing cannot tell them apart
    header = text.partition("\n" + HEADER_END + "\n")[0]
    listed = re.findall(r"^#   (\d+)\. (.*)$", header, flags=re.MULTILINE)
    order = [firsts.get(line.strip(), -1) for _, line in listed]
    numbers = [int(number) for number, _ in listed]
    if numbers != list(range(1, len(step.choices) + 1)) or sorted(order) != list(
            range(len(step.choices))):
        return None
    return order


def split_code(text: str) -> str:
    """The learner's code: what follows the header marker (the whole text if it was removed)."""
    marker = "\n" + HEADER_END + "\n"
    if text.startswith(HEADER_END + "\n"):
        return text[len(HEADER_END) + 1 :]
    _, found, rest = text.partition(marker)
    return rest if found else text


class Workspace:
    """A folder of exercise files plus its manifest."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    @property
    def manifest_path(self) -> Path:
        return self.root / MANIFEST_NAME

    def exists(self) -> bool:
        return self.manifest_path.is_file()

    def path_of(self, entry: ExerciseEntry) -> Path:
        return self.root / entry.path

    # ------------------------------------------------------------------ manifest

    def load_manifest(self) -> Manifest:
        if not self.exists():
            raise WorkspaceError(
                T(f"no exercises in {self.root} (missing {MANIFEST_NAME})",
                  f"{self.root} 中没有练习（缺少 {MANIFEST_NAME}）"),
                hint=T(f"run `tutor start --dir {self.root}` first",
                       f"请先运行 `tutor start --dir {self.root}`"),
            )
        try:
            data = json.loads(self.manifest_path.read_text(encoding="utf-8"))
            manifest = Manifest.model_validate(data)
        except (OSError, ValueError, ValidationError) as exc:
            why = str(exc).splitlines()[0]
            raise WorkspaceError(
                T(f"cannot read {self.manifest_path}: {why}",
                  f"无法读取 {self.manifest_path}：{why}"),
                hint=T("delete it and run `tutor start` again (files you changed are kept)",
                       "删除它后重新运行 `tutor start`（你改过的文件会保留）"),
            ) from exc
        if manifest.version > MANIFEST_VERSION:
            raise WorkspaceError(
                T(f"{self.manifest_path} was written by a newer autograd-tutor",
                  f"{self.manifest_path} 是由更新版本的 autograd-tutor 写入的"),
                hint=T("upgrade autograd-tutor", "请升级 autograd-tutor"),
            )
        return manifest

    def save_manifest(self, manifest: Manifest) -> None:
        """Atomic: a kill while saving leaves the old manifest or the new one, never half."""
        tmp = self.manifest_path.with_suffix(".tmp")
        with _writing(self.manifest_path):
            self.root.mkdir(parents=True, exist_ok=True)
            tmp.write_text(manifest.model_dump_json(indent=2) + "\n", encoding="utf-8")
            os.replace(tmp, self.manifest_path)

    def update_entry(self, entry: ExerciseEntry) -> None:
        """Save one entry into the manifest as it is on disk now: another ``tutor`` (a
        ``reset`` beside a ``watch``) may have changed other entries since this one read it."""
        manifest = self.load_manifest()
        manifest.exercises = [entry if e.ref == entry.ref else e for e in manifest.exercises]
        self.save_manifest(manifest)

    # ------------------------------------------------------------------ files

    def read(self, entry: ExerciseEntry) -> str | None:
        """The file's text, or None when it is missing."""
        try:
            return self.path_of(entry).read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as exc:
            path = self.path_of(entry)
            raise WorkspaceError(
                T(f"cannot read {path}: {exc}", f"无法读取 {path}：{exc}")
            ) from exc

    def changed_by_learner(self, entry: ExerciseEntry) -> bool:
        """True when the file differs from what tutor wrote (or tutor never wrote it)."""
        text = self.read(entry)
        if text is None:
            return False
        return entry.sha256 is None or sha256_text(text) != entry.sha256

    def write_exercise(self, entry: ExerciseEntry, text: str) -> ExerciseEntry:
        """Write a file and return its entry with the new hash (caller saves the manifest)."""
        path = self.path_of(entry)
        tmp = path.with_name(path.name + ".tmp")
        with _writing(path):
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, path)
        digest = sha256_text(text)
        return entry.model_copy(update={"sha256": digest, "seen_sha256": digest})

    def write_backup(self, entry: ExerciseEntry, text: str) -> Path:
        """Keep ``text`` beside the exercise as ``FILE.bak`` (replacing an older one)."""
        path = self.path_of(entry)
        backup = path.with_name(path.name + ".bak")
        with _writing(backup):
            backup.write_text(text, encoding="utf-8")
        return backup

    def write_course(
        self,
        course: Course,
        *,
        lesson_ids: Iterable[str] | None = None,
        lang: Lang,
        lessons_dir: Path | None = None,
        saved_code: Callable[[str], str | None] | None = None,
        learner: str | None = None,
    ) -> WriteReport:
        """Write the exercises of the given lessons (all when None) and update the manifest.

        A file the learner changed (or that tutor did not write) is never overwritten.
        ``saved_code(ref)`` gives code the learner already wrote elsewhere (the app), used
        instead of the starter for files written now (for a quiz: the choices last picked).
        ``learner``: whose order quiz choices are numbered in (None: the lesson's).
        """
        wanted = None if lesson_ids is None else set(lesson_ids)
        if wanted is not None:
            unknown = wanted - {lesson.id for lesson in course.lessons}
            if unknown:
                known = ", ".join(lesson.id for lesson in course.lessons)
                missing = ", ".join(sorted(unknown))
                raise WorkspaceError(
                    T(f"no lesson {missing} in the course", f"课程中没有课程 {missing}"),
                    hint=T(f"lessons: {known}", f"现有课程：{known}"),
                )
        manifest = self.load_manifest() if self.exists() else Manifest()
        manifest.lang = lang
        manifest.lessons_dir = str(lessons_dir.resolve()) if lessons_dir else None
        entries = {entry.ref: entry for entry in manifest.exercises}
        report = WriteReport()
        for lesson_no, lesson in enumerate(course.lessons, 1):
            if wanted is not None and lesson.id not in wanted:
                continue
            for step_no, step in enumerate(lesson.steps, 1):
                ref = f"{lesson.id}/{step.id}"
                if not isinstance(step, (CodeStep, FixStep, QuizStep)):
                    if step.kind != "reading":
                        report.not_written.append(ref)
                    continue
                entry = entries.get(ref) or ExerciseEntry(
                    ref=ref,
                    kind=step.kind,
                    path=exercise_path(lesson_no, lesson.id, step_no, step.id),
                )
                order = quiz_order(step, ref, learner)
                entries[ref] = self._write_one(
                    entry, lesson, step, step_no, lang, saved_code, report, order
                )
        manifest.exercises = sorted(entries.values(), key=lambda e: e.path)
        self.save_manifest(manifest)
        return report

    def _write_one(
        self,
        entry: ExerciseEntry,
        lesson: Lesson,
        step: FileStep,
        step_no: int,
        lang: Lang,
        saved_code: Callable[[str], str | None] | None,
        report: WriteReport,
        order: list[int] | None = None,
    ) -> ExerciseEntry:
        current = self.read(entry)
        if current is not None and self.changed_by_learner(entry):
            report.kept.append(entry.path)
            return entry
        saved = saved_code(entry.ref) if saved_code else None
        if saved is not None and isinstance(step, QuizStep):  # the app keeps the picks
            picked = [int(p) for p in saved.split(",") if p.strip().isdigit()]
            saved = answer_code(picked) if picked else None
        code = saved or (split_code(current) if current is not None else None)
        if code is None or is_starter_of(step, code):  # an untouched starter follows the language
            code = starter_of(step, lang)
        text = render_exercise(lesson, step, step_no, lang, code, order)
        if current == text:
            report.unchanged.append(entry.path)
            return entry
        (report.updated if current is not None else report.written).append(entry.path)
        return self.write_exercise(entry, text)


def describe_report(report: WriteReport, root: Path) -> list[Text]:
    """Learner-facing lines summing up a :class:`WriteReport`."""
    lines: list[Text] = []
    if report.written:
        lines.append(
            T("Wrote {n} exercise files in {dir}", "在 {dir} 中写入了 {n} 个练习文件").format(
                n=len(report.written), dir=root
            )
        )
    if report.updated:
        lines.append(
            T(
                "Updated {n} files you had not changed",
                "更新了 {n} 个你尚未修改的文件",
            ).format(n=len(report.updated))
        )
    if report.unchanged:
        lines.append(
            T("{n} files already up to date", "{n} 个文件已是最新").format(
                n=len(report.unchanged)
            )
        )
    for path in report.kept:
        lines.append(
            T(
                "Kept {path}: you changed it, so it was not overwritten",
                "保留 {path}：你已修改过它，因此没有覆盖",
            ).format(path=path)
        )
    if report.not_written:
        lines.append(
            T(
                "{n} answer steps are not files; do them in the app (`tutor`)",
                "{n} 个填答案步骤不生成文件；请在应用（`tutor`）中完成",
            ).format(n=len(report.not_written))
        )
    return lines

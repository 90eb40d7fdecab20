"""Batch grading: a folder of student submissions, graded in parallel against one sandbox.

Layout: ``SUBMISSIONS_DIR/<student>/<step-id>.py``. A step id that several lessons share is
ambiguous; name such a file ``<lesson>--<step>.py`` or put it in ``<student>/<lesson>/<step>.py``.
Every file is read (and hashed) before any submission runs, and the truth of every exercise
is computed before any submission runs, so nothing a submission does on disk can change what
the others are graded with. Parallelism is threads against one warm sandbox: measured with a
canned runner, the grader's own work is about 1.6 ms of Python per submission, against tens of
ms waiting on the forked run, so the GIL is not the limit, and threads share one torch server
and one in-memory truth cache where processes would each need their own.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import stat
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tutor.course.models import CodeStep, Course, FixStep, Lesson, QuizStep
from tutor.grading.expected import ExpectedCache
from tutor.grading.feedback import msg
from tutor.grading.models import Verdict, VerdictStatus
from tutor.grading.reports import SubmissionEntry, entry_from_verdict
from tutor.grading.verdicts import (
    expected_run,
    grade_quiz_file,
    grade_step,
    quiz_not_gradable,
    step_ref,
    unrun_checks,
)
from tutor.i18n import Lang, T, Text
from tutor.sandbox.models import Limits

if TYPE_CHECKING:
    from tutor.sandbox.runner import Runner

SUFFIX = ".py"
LESSON_STEP_SEPARATOR = "--"
MAX_SUBMISSION_BYTES = 1_000_000
"""A larger file is refused unread: a lesson's answer is a few hundred bytes."""
MAX_STUDENT_NAME = 100


GradedStep = CodeStep | FixStep | QuizStep
"""What a submitted file can answer: code, a fix, or a quiz (the file ``tutor start``
writes, its ANSWER read against the choices it lists)."""


@dataclass(frozen=True)
class Submission:
    student: str
    lesson: Lesson
    step: GradedStep
    path: Path
    file: str
    """Path relative to the submissions folder, with forward slashes."""
    code: str
    sha256: str
    refused: Text | None = None
    """Why the file is not graded (a symlink, a FIFO, too large, not UTF-8); ``code`` is
    empty then."""

    @property
    def exercise(self) -> str:
        return step_ref(self.lesson, self.step)


def exercise_sha256(step: GradedStep) -> str:
    """A hash of what grading an exercise depends on: its checks (hidden inputs and points
    included) and its reference solution; a quiz's choices. ``--resume`` regrades when it
    changes."""
    data = step.model_dump(mode="json")
    keys = ("choices", "multiple") if isinstance(step, QuizStep) else ("checks", "solution")
    blob = json.dumps({key: data[key] for key in keys}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Unmatched:
    file: str
    reason: str
    text: Text | None = None  # the reason in both languages; ``reason`` is its English

    def __str__(self) -> str:
        return f"{self.file}: {self.reason}"

    def said(self, lang: Lang) -> str:
        """``file: reason`` in the teacher's language."""
        return f"{self.file}: {self.text.get(lang) if self.text else self.reason}"


def _unmatched(file: str, text: Text) -> Unmatched:
    return Unmatched(file, text.en, text)


class StepIndex:
    """Finds the gradable step a file name stands for."""

    def __init__(self, course: Course) -> None:
        self.by_ref: dict[str, tuple[Lesson, GradedStep]] = {}
        self.by_step: dict[str, list[tuple[Lesson, GradedStep]]] = {}
        for lesson in course.lessons:
            for step in lesson.steps:
                if isinstance(step, (CodeStep, FixStep, QuizStep)):
                    self.by_ref[f"{lesson.id}/{step.id}"] = (lesson, step)
                    self.by_step.setdefault(step.id, []).append((lesson, step))

    def find(self, parts: Sequence[str]) -> tuple[Lesson, GradedStep] | Text:
        """``parts``: the path under the student's folder. The match, or why there is none."""
        if len(parts) == 2:
            ref = f"{parts[0]}/{Path(parts[1]).stem}"
            return self.by_ref.get(ref) or T(f"no exercise {ref}", f"没有练习 {ref}")
        if len(parts) != 1:
            return T("too deep: use <student>/<step>.py or <student>/<lesson>/<step>.py",
                     "目录太深：请用 <学生>/<步骤>.py 或 <学生>/<课程>/<步骤>.py")
        stem = Path(parts[0]).stem
        if LESSON_STEP_SEPARATOR in stem:
            lesson_id, _, step_id = stem.partition(LESSON_STEP_SEPARATOR)
            ref = f"{lesson_id}/{step_id}"
            return self.by_ref.get(ref) or T(f"no exercise {ref}", f"没有练习 {ref}")
        matches = self.by_step.get(stem, [])
        if len(matches) == 1:
            return matches[0]
        if not matches:
            return T(f"no code, fix-the-bug or quiz step has the id {stem!r}",
                     f"没有编程、改错或测验步骤的 id 是 {stem!r}")
        lessons = ", ".join(lesson.id for lesson, _ in matches)
        sep = LESSON_STEP_SEPARATOR
        return T(
            f"step id {stem!r} is in several lessons ({lessons}); name the file "
            f"<lesson>{sep}{stem}.py or put it in <student>/<lesson>/",
            f"步骤 id {stem!r} 出现在多个课程中（{lessons}）；请把文件命名为 "
            f"<课程>{sep}{stem}.py，或放进 <学生>/<课程>/ 文件夹",
        )


def _visible(path: Path, root: Path) -> bool:
    return not any(
        part.startswith(".") or part == "__pycache__" for part in path.relative_to(root).parts
    )


def student_name_problem(name: str) -> Text | None:
    """Why a folder name cannot be a student's (it becomes a row, a suite, a file name)."""
    if len(name) > MAX_STUDENT_NAME:
        return T(f"student folder name longer than {MAX_STUDENT_NAME} characters",
                 f"学生文件夹名超过 {MAX_STUDENT_NAME} 个字符")
    if not name.isprintable() or name != name.strip():
        return T(f"student folder name {name!r} holds control characters or outer spaces; "
                 "rename the folder",
                 f"学生文件夹名 {name!r} 含控制字符或首尾空格；请重命名该文件夹")
    return None


def _walk(directory: Path) -> tuple[list[Path], list[Unmatched]]:
    """Every ``*.py`` entry under ``directory`` (sorted), never through a symlinked folder;
    and the student folders that cannot be graded at all, with the reason."""
    found: list[Path] = []
    refused: list[Unmatched] = []
    for top, dirs, files in os.walk(directory, followlinks=False):
        here = Path(top)
        for name in dirs:
            if (here / name).is_symlink():
                rel = (here / name).relative_to(directory).as_posix()
                refused.append(_unmatched(f"{rel}/", T(
                    "a symbolic link to a folder: not followed (copy the files instead)",
                    "指向文件夹的符号链接：不会跟随（请改为复制文件）")))
        dirs[:] = sorted(d for d in dirs if not (here / d).is_symlink())
        # files: regular files, and also symlinks, FIFOs, devices: read_source refuses those
        found += [here / name for name in files if name.endswith(SUFFIX)]
    return sorted(set(found)), refused


def discover(directory: Path, course: Course) -> tuple[list[Submission], list[Unmatched]]:
    """Every submission under ``directory`` (sorted), and the files that matched nothing.

    A file that is not safe to read (a symlink, a FIFO, a device, anything resolving outside
    its student's folder, too large) is still a submission: it is reported not gradable with
    the reason, and never opened."""
    index = StepIndex(course)
    submissions: list[Submission] = []
    paths, unmatched = _walk(directory)
    bad_students: dict[str, Text] = {}
    for path in paths:
        if not _visible(path, directory):
            continue
        rel = path.relative_to(directory)
        file = rel.as_posix()
        if len(rel.parts) < 2:
            unmatched.append(_unmatched(file, T("put submissions in a folder per student",
                                                "请把提交放在每个学生各自的文件夹里")))
            continue
        student = rel.parts[0]
        problem = bad_students.get(student) or student_name_problem(student)
        if problem is not None:
            if student not in bad_students:
                bad_students[student] = problem
                unmatched.append(_unmatched(f"{student}/", problem))
            continue
        found = index.find(rel.parts[1:])
        if isinstance(found, Text):
            unmatched.append(_unmatched(file, found))
            continue
        submissions.append(read_submission(path, file, student, *found,
                                           root=directory / student))
    return submissions, unmatched


def student_folders(directory: Path) -> list[str]:
    """Every student's folder name (sorted), also one holding no gradable file: the
    gradebook lists such a student with zeros instead of leaving them out. A symlinked
    folder or an invalid name is none (``discover`` says why)."""
    return sorted(
        path.name for path in directory.iterdir()
        if not path.is_symlink() and path.is_dir() and _visible(path, directory)
        and student_name_problem(path.name) is None
    )


def _kind_of_file(mode: int) -> Text:
    if stat.S_ISLNK(mode):
        return T("a symbolic link: not followed (submit the file itself)",
                 "符号链接：不会跟随（请提交文件本身）")
    if stat.S_ISFIFO(mode):
        return T("a FIFO (named pipe), not a regular file", "命名管道（FIFO），不是普通文件")
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return T("a device, not a regular file", "设备文件，不是普通文件")
    if stat.S_ISSOCK(mode):
        return T("a socket, not a regular file", "套接字，不是普通文件")
    return T("not a regular file", "不是普通文件")


def _too_large(size: int) -> Text:
    mb, cap_kb = size / 1_000_000, MAX_SUBMISSION_BYTES // 1000
    return T(f"the file is {mb:.1f} MB; a submission may be at most {cap_kb} kB",
             f"文件大小为 {mb:.1f} MB；提交最大为 {cap_kb} kB")


def read_source(path: Path, root: Path | None = None) -> bytes | Text:
    """The bytes of a submission, or why it is not read. Regular files only, opened without
    following a symlink (``O_NOFOLLOW``, and no symlink anywhere below ``root``), checked to
    be the file that was looked at, and at most :data:`MAX_SUBMISSION_BYTES`."""
    try:
        before = os.lstat(path)
    except OSError as exc:
        return T(f"cannot read the file: {exc.strerror}", f"无法读取文件：{exc.strerror}")
    if not stat.S_ISREG(before.st_mode):
        return _kind_of_file(before.st_mode)
    if root is not None:
        real_root = os.path.realpath(root)
        if os.path.realpath(path) != os.path.join(real_root, os.path.relpath(path, root)):
            return T("resolves outside the student's folder (through a symbolic link): not read",
                     "（经由符号链接）指向学生文件夹之外：不会读取")
    if before.st_size > MAX_SUBMISSION_BYTES:
        return _too_large(before.st_size)
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return _kind_of_file(stat.S_IFLNK)
        return T(f"cannot read the file: {exc.strerror}", f"无法读取文件：{exc.strerror}")
    try:
        now = os.fstat(fd)
        if not stat.S_ISREG(now.st_mode) or (now.st_dev, now.st_ino) != (
            before.st_dev, before.st_ino
        ):
            return T("the file changed while it was read: not graded",
                     "文件在读取时被改动：未评分")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(MAX_SUBMISSION_BYTES + 1)
    except OSError as exc:
        return T(f"cannot read the file: {exc.strerror}", f"无法读取文件：{exc.strerror}")
    finally:
        os.close(fd)
    if len(data) > MAX_SUBMISSION_BYTES:
        return _too_large(len(data))
    return data


def decode_source(data: bytes) -> str | Text:
    """UTF-8 text (a BOM, as Windows editors write, is dropped), or why it is not."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return T(f"not UTF-8 text (byte {exc.start}); save the file as UTF-8",
                 f"不是 UTF-8 文本（第 {exc.start} 个字节）；请以 UTF-8 保存文件")


def read_submission(
    path: Path, file: str, student: str, lesson: Lesson, step: GradedStep,
    *, root: Path | None = None,
) -> Submission:
    """The submission at ``path``; one that is not safe to read is ``refused``, unread."""
    data = read_source(path, root)
    code = decode_source(data) if isinstance(data, bytes) else data
    digest = hashlib.sha256(data if isinstance(data, bytes) else b"").hexdigest()
    return Submission(
        student=student, lesson=lesson, step=step, path=path, file=file,
        code=code if isinstance(code, str) else "", sha256=digest,
        refused=None if isinstance(code, str) else code,
    )


ProgressCallback = Callable[[SubmissionEntry, bool], None]
"""Called after each submission with its entry and whether it was resumed."""


def _ungraded(submission: Submission, message: Text, status: VerdictStatus) -> Verdict:
    """0 of everything the exercise is worth, each of its results listed (they add up)."""
    step = submission.step
    if isinstance(step, QuizStep):
        return quiz_not_gradable(submission.lesson, step, message, status)
    return Verdict(
        step=submission.exercise, status=status, score=0.0,
        max_score=float(sum(check.points for check in step.checks)),
        checks=unrun_checks(step, message), message=message,
    )


def _grader_failure(submission: Submission, error: Exception) -> Verdict:
    """The grader itself failed on this submission: record it, do not stop the batch."""
    message = msg("grader_failed", type=type(error).__name__, message=str(error)[:300])
    return _ungraded(submission, message, "error")


def _refused_verdict(submission: Submission) -> Verdict:
    assert submission.refused is not None
    return _ungraded(submission, msg("not_read", reason=submission.refused), "not_gradable")


def split_previous(
    submissions: Sequence[Submission], previous: Iterable[SubmissionEntry]
) -> tuple[dict[int, SubmissionEntry], int]:
    """The entries of ``previous`` that still hold, by position in ``submissions`` (same
    student, exercise, file content and exercise content), and how many would have held
    but for a change of their exercise (its checks, solution or hidden inputs)."""
    done = {(e.student, e.exercise, e.sha256): e for e in previous}
    fingerprints: dict[int, str] = {}
    kept: dict[int, SubmissionEntry] = {}
    changed = 0
    for i, submission in enumerate(submissions):
        entry = done.get((submission.student, submission.exercise, submission.sha256))
        if entry is None:
            continue
        step = submission.step
        if id(step) not in fingerprints:
            fingerprints[id(step)] = exercise_sha256(step)
        if entry.exercise_sha256 == fingerprints[id(step)]:
            kept[i] = entry
        else:
            changed += 1
    return kept, changed


def grade_submissions(
    submissions: Sequence[Submission],
    *,
    runner: Runner,
    jobs: int = 1,
    device: str = "cpu",
    cache: ExpectedCache | None = None,
    limits: Limits | None = None,
    lang: Lang = "en",
    previous: Iterable[SubmissionEntry] = (),
    progress: ProgressCallback | None = None,
    reveal: bool = False,
) -> list[SubmissionEntry]:
    """Grade every submission (in the given order); entries of ``previous`` with the same
    student, exercise, content hash and exercise content are reused instead of grading
    again (:func:`split_previous`). ``reveal``: whether feedback shows expected values
    (off: summative grading keeps the truth back)."""
    cache = cache if cache is not None else ExpectedCache()
    results, _ = split_previous(submissions, previous)
    todo = [s for i, s in enumerate(submissions) if i not in results]
    jobs = max(1, jobs)
    fingerprints = {id(s.step): exercise_sha256(s.step) for s in todo}

    for i in sorted(results):
        if progress:
            progress(results[i], True)

    steps = {id(s.step): s.step for s in todo
             if s.refused is None and not isinstance(s.step, QuizStep)}

    def truth(step: CodeStep | FixStep) -> None:
        # a failure here is retried, and reported, per submission
        with contextlib.suppress(Exception):
            expected_run(step, runner=runner, device=device, cache=cache)

    def one(submission: Submission) -> SubmissionEntry:
        started = time.perf_counter()
        try:
            if submission.refused is not None:
                verdict = _refused_verdict(submission)
            elif isinstance(submission.step, QuizStep):  # data, never run
                verdict = grade_quiz_file(submission.lesson, submission.step, submission.code,
                                          reveal=reveal)
            else:
                verdict = grade_step(
                    submission.lesson, submission.step, submission.code, runner=runner,
                    device=device, cache=cache, limits=limits, reveal=reveal,
                )
        except Exception as error:  # one submission must not stop the rest
            verdict = _grader_failure(submission, error)
        return entry_from_verdict(
            verdict, student=submission.student, file=submission.file,
            sha256=submission.sha256, lang=lang,
            duration_ms=(time.perf_counter() - started) * 1000,
            exercise_sha256=fingerprints[id(submission.step)],
        )

    positions = {id(s): i for i, s in enumerate(submissions)}
    with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="grade") as pool:
        # the truth of every exercise first, before any submission runs
        list(pool.map(truth, steps.values()))
        futures = {pool.submit(one, submission): submission for submission in todo}
        for future in as_completed(futures):
            entry = future.result()
            results[positions[id(futures[future])]] = entry
            if progress:
                progress(entry, False)
    return [results[i] for i in range(len(submissions))]

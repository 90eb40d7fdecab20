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
import hashlib
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tutor.course.models import CodeStep, Course, FixStep, Lesson
from tutor.grading.expected import ExpectedCache
from tutor.grading.feedback import msg
from tutor.grading.models import Verdict
from tutor.grading.reports import SubmissionEntry, entry_from_verdict
from tutor.grading.verdicts import expected_run, grade_step, step_ref
from tutor.i18n import Lang, T, Text
from tutor.sandbox.models import Limits

if TYPE_CHECKING:
    from tutor.sandbox.runner import Runner

SUFFIX = ".py"
LESSON_STEP_SEPARATOR = "--"
MAX_SUBMISSION_BYTES = 1_000_000


@dataclass(frozen=True)
class Submission:
    student: str
    lesson: Lesson
    step: CodeStep | FixStep
    path: Path
    file: str
    """Path relative to the submissions folder, with forward slashes."""
    code: str
    sha256: str

    @property
    def exercise(self) -> str:
        return step_ref(self.lesson, self.step)


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
        self.by_ref: dict[str, tuple[Lesson, CodeStep | FixStep]] = {}
        self.by_step: dict[str, list[tuple[Lesson, CodeStep | FixStep]]] = {}
        for lesson in course.lessons:
            for step in lesson.steps:
                if isinstance(step, (CodeStep, FixStep)):
                    self.by_ref[f"{lesson.id}/{step.id}"] = (lesson, step)
                    self.by_step.setdefault(step.id, []).append((lesson, step))

    def find(self, parts: Sequence[str]) -> tuple[Lesson, CodeStep | FixStep] | Text:
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
            return T(f"no code or fix-the-bug step has the id {stem!r}",
                     f"没有编程或改错步骤的 id 是 {stem!r}")
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


def discover(directory: Path, course: Course) -> tuple[list[Submission], list[Unmatched]]:
    """Every submission under ``directory`` (sorted), and the files that matched nothing."""
    index = StepIndex(course)
    submissions: list[Submission] = []
    unmatched: list[Unmatched] = []
    for path in sorted(directory.rglob(f"*{SUFFIX}")):
        if not path.is_file() or not _visible(path, directory):
            continue
        rel = path.relative_to(directory)
        file = rel.as_posix()
        if len(rel.parts) < 2:
            unmatched.append(_unmatched(file, T("put submissions in a folder per student",
                                                "请把提交放在每个学生各自的文件夹里")))
            continue
        found = index.find(rel.parts[1:])
        if isinstance(found, Text):
            unmatched.append(_unmatched(file, found))
            continue
        submissions.append(read_submission(path, file, rel.parts[0], *found))
    return submissions, unmatched


def student_folders(directory: Path) -> list[str]:
    """Every student's folder name (sorted), also one holding no gradable file: the
    gradebook lists such a student with zeros instead of leaving them out."""
    return sorted(
        path.name for path in directory.iterdir() if path.is_dir() and _visible(path, directory)
    )


def read_submission(
    path: Path, file: str, student: str, lesson: Lesson, step: CodeStep | FixStep
) -> Submission:
    data = path.read_bytes()[:MAX_SUBMISSION_BYTES]
    return Submission(
        student=student, lesson=lesson, step=step, path=path, file=file,
        code=data.decode("utf-8", errors="replace"), sha256=hashlib.sha256(data).hexdigest(),
    )


ProgressCallback = Callable[[SubmissionEntry, bool], None]
"""Called after each submission with its entry and whether it was resumed."""


def _grader_failure(submission: Submission, error: Exception) -> Verdict:
    """The grader itself failed on this submission: record it, do not stop the batch."""
    step = submission.step
    message = msg("grader_failed", type=type(error).__name__, message=str(error)[:300])
    return Verdict(
        step=submission.exercise, status="error", score=0.0,
        max_score=float(sum(check.points for check in step.checks)), message=message,
    )


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
) -> list[SubmissionEntry]:
    """Grade every submission (in the given order); entries of ``previous`` with the same
    student, exercise and content hash are reused instead of grading again."""
    cache = cache if cache is not None else ExpectedCache()
    done = {(e.student, e.exercise, e.sha256): e for e in previous}
    todo = [s for s in submissions if (s.student, s.exercise, s.sha256) not in done]
    jobs = max(1, jobs)
    results: dict[int, SubmissionEntry] = {}

    for i, submission in enumerate(submissions):
        key = (submission.student, submission.exercise, submission.sha256)
        if key in done:
            results[i] = done[key]
            if progress:
                progress(done[key], True)

    steps = {id(s.step): s.step for s in todo}

    def truth(step: CodeStep | FixStep) -> None:
        # a failure here is retried, and reported, per submission
        with contextlib.suppress(Exception):
            expected_run(step, runner=runner, device=device, cache=cache)

    def one(submission: Submission) -> SubmissionEntry:
        started = time.perf_counter()
        try:
            verdict = grade_step(
                submission.lesson, submission.step, submission.code, runner=runner,
                device=device, cache=cache, limits=limits,
            )
        except Exception as error:  # one submission must not stop the rest
            verdict = _grader_failure(submission, error)
        return entry_from_verdict(
            verdict, student=submission.student, file=submission.file,
            sha256=submission.sha256, lang=lang,
            duration_ms=(time.perf_counter() - started) * 1000,
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

"""Own-editor mode: the exercise files of a workspace, worked through the learning session.

``tutor watch``, ``verify``, ``list``, ``hint`` and ``reset`` are faces over
:class:`ExerciseFiles`, which maps each file to its step and hands every grade, hint and
reset to the one :class:`~tutor.learning.session.LearningSession`, so a file graded in the
shell is recorded, diagnosed and hinted exactly as the same code run in the app.

A file's text is graded as the learner sees it (comment header included, so error lines are
their editor's); the code kept for the step is the text below the header. The manifest keeps
the hash of the text last written or graded (``seen_sha256``): a save that leaves a file as
it was is not graded again, and ``verify`` records an attempt only for a text not seen, so
verifying twice does not count twice (attempts unlock the tutor's hints).
"""

from __future__ import annotations

import difflib
import threading
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from tutor.course.models import CodeStep, FixStep, Lesson, QuizStep
from tutor.i18n import T, Text
from tutor.learning.session import Attempt, HintShown, LearningSession, step_ref
from tutor.workspace import (
    ExerciseEntry,
    FileStep,
    Workspace,
    WorkspaceError,
    is_starter_of,
    parse_quiz_answer,
    quiz_order,
    render_exercise,
    sha256_text,
    split_code,
    starter_of,
)

if TYPE_CHECKING:
    from tutor.workspace import Manifest

Status = Literal["passed", "tried", "new"]


@dataclass(frozen=True)
class ExerciseStatus:
    """One row of ``tutor list``: an exercise file and what the store knows of its step."""

    number: int
    entry: ExerciseEntry
    lesson: Lesson
    step: FileStep
    status: Status
    attempts: int
    best_score: float | None
    max_score: float | None
    hints_shown: int
    missing: bool
    current: bool


class ExerciseFiles:
    """The exercise files of ``workspace`` that the session's course still has."""

    def __init__(self, session: LearningSession, workspace: Workspace) -> None:
        self.session = session
        self.workspace = workspace
        manifest: Manifest = workspace.load_manifest()
        self.entries: list[ExerciseEntry] = []
        self.stale: list[str] = []
        """Refs of files whose step the course no longer has (skipped, not graded)."""
        for entry in manifest.exercises:
            try:
                _, step = session.course.find(entry.ref)
            except KeyError:
                step = None
            if not isinstance(step, (CodeStep, FixStep, QuizStep)) or step.kind != entry.kind:
                self.stale.append(entry.ref)  # gone, or now of another kind
                continue
            self.entries.append(entry)
        if not self.entries:
            raise WorkspaceError(
                T(f"no exercise files in {workspace.root}", f"{workspace.root} 中没有练习文件"),
                hint=T(f"run `tutor start --dir {workspace.root}`",
                       f"请运行 `tutor start --dir {workspace.root}`"),
            )
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ lookup

    def step_of(self, entry: ExerciseEntry) -> tuple[Lesson, FileStep]:
        lesson, step = self.session.course.find(entry.ref)
        assert isinstance(step, (CodeStep, FixStep, QuizStep)), entry.ref  # (see __init__)
        return lesson, step

    def number_of(self, entry: ExerciseEntry) -> int:
        """1-based, as ``tutor list`` numbers the files."""
        return [e.ref for e in self.entries].index(entry.ref) + 1

    def entry(self, ref: str) -> ExerciseEntry:
        """The entry as it is now (its hashes change as files are graded and written)."""
        for entry in self.entries:
            if entry.ref == ref:
                return entry
        raise KeyError(ref)

    def find(self, name: str) -> ExerciseEntry:
        """An exercise named as the learner would: its number in ``tutor list``, its
        ``LESSON/STEP``, its step id, or its file (relative to the folder, or a path)."""
        wanted = name.strip()
        if wanted.isdigit() and 1 <= int(wanted) <= len(self.entries):
            return self.entries[int(wanted) - 1]
        by_step = [e for e in self.entries if e.step_id == wanted]
        for entry in self.entries:
            if wanted in (entry.ref, entry.path):
                return entry
        if len(by_step) == 1:
            return by_step[0]
        path = Path(wanted).expanduser()
        if path.suffix == ".py":
            resolved = path.resolve()
            for entry in self.entries:
                if self.workspace.path_of(entry).resolve() == resolved:
                    return entry
        names = [e.ref for e in self.entries] + [e.step_id for e in self.entries]
        close = difflib.get_close_matches(wanted, names, n=3, cutoff=0.5)
        n = len(self.entries)
        if close:
            hint = T("did you mean " + " or ".join(close) + "?",
                     "你是不是想找 " + " 或 ".join(close) + "？")
        else:
            hint = T(f"give a number 1-{n}, LESSON/STEP or a file; `tutor list` shows them",
                     f"请给出编号 1-{n}、LESSON/STEP 或文件名；`tutor list` 会列出它们")
        if len(by_step) > 1:
            refs = ", ".join(e.ref for e in by_step)
            raise WorkspaceError(
                T(f"{wanted!r} names more than one exercise: {refs}",
                  f"{wanted!r} 对应多个练习：{refs}"),
                hint=T("give LESSON/STEP", "请写成 LESSON/STEP"),
            )
        raise WorkspaceError(
            T(f"no exercise {wanted!r} in {self.workspace.root}",
              f"{self.workspace.root} 中没有练习 {wanted!r}"),
            hint=hint,
        )

    def owner_of(self, path: str | Path) -> ExerciseEntry | None:
        """The exercise whose file is ``path`` (an absolute path a watcher reported)."""
        resolved = Path(path).resolve()
        for entry in self.entries:
            if self.workspace.path_of(entry).resolve() == resolved:
                return entry
        return None

    # ------------------------------------------------------------------ position

    @property
    def current(self) -> ExerciseEntry | None:
        """The exercise at the session's position (None when the learner is elsewhere)."""
        for entry in self.entries:
            if entry.ref == self.session.ref:
                return entry
        return None

    def starting_entry(self) -> ExerciseEntry:
        """Where to pick up: the current exercise unless passed, else the first not passed
        (the first when all are)."""
        passed = self.session.store.passed_steps()
        current = self.current
        if current is not None and current.ref not in passed:
            return current
        return next((e for e in self.entries if e.ref not in passed), self.entries[0])

    def go(self, entry: ExerciseEntry) -> ExerciseEntry:
        """Make ``entry`` the session's position, writing its file again if it went missing."""
        self.session.goto(entry.lesson_id, entry.step_id)
        if self.read(entry) is None:
            entry = self.restore(entry)
        return entry

    def next_unpassed(self, after: ExerciseEntry) -> ExerciseEntry | None:
        """The next exercise not passed, after ``after`` and round to the start (None when
        every other one has passed)."""
        passed = self.session.store.passed_steps()
        start = self.number_of(after)
        n = len(self.entries)
        for offset in range(n - 1):
            entry = self.entries[(start + offset) % n]
            if entry.ref not in passed:
                return entry
        return None

    # ------------------------------------------------------------------ files

    def read(self, entry: ExerciseEntry) -> str | None:
        return self.workspace.read(entry)

    def _write(self, entry: ExerciseEntry, code: str) -> ExerciseEntry:
        lesson, step = self.step_of(entry)
        step_no = lesson.steps.index(step) + 1
        order = quiz_order(step, entry.ref, self.session.learner)
        text = render_exercise(lesson, step, step_no, self.session.lang, code, order)
        return self._keep(self.workspace.write_exercise(self.entry(entry.ref), text))

    def _keep(self, entry: ExerciseEntry) -> ExerciseEntry:
        with self._lock:
            self.entries = [entry if e.ref == entry.ref else e for e in self.entries]
            self.workspace.update_entry(entry)
        return entry

    def restore(self, entry: ExerciseEntry) -> ExerciseEntry:
        """Write a missing file again with the starter code (in the session's language)."""
        _, step = self.step_of(entry)
        return self._write(entry, starter_of(step, self.session.lang))

    def reset(self, entry: ExerciseEntry) -> Path | None:
        """Back to the starter code, in the file and in the store (the app shows it too).
        Code the learner wrote is kept beside the file (``FILE.bak``, returned). Progress
        and hints stay: what was passed stays passed."""
        _, step = self.step_of(entry)
        old = self.read(entry)
        backup = None
        if old is not None and not is_starter_of(step, split_code(old)):
            backup = self.workspace.write_backup(entry, old)
        starter = starter_of(step, self.session.lang)
        if not isinstance(step, QuizStep):  # (a quiz keeps its picks in its attempts)
            self.session.store.save_code(entry.ref, starter)
        self._write(entry, starter)
        return backup

    def unseen(self, entry: ExerciseEntry) -> bool:
        """Does the file hold a text tutor has not written or graded yet?"""
        text = self.read(entry)
        return text is not None and sha256_text(text) != self.entry(entry.ref).seen_sha256

    def changed(self, paths: Iterable[str | Path]) -> list[ExerciseEntry]:
        """The exercises among ``paths`` (what a watcher reported) whose text is new, in
        course order. A save that left a file as it was (``touch``, a double write, tutor's
        own writes) is not among them."""
        owners = {e.ref for e in (self.owner_of(p) for p in paths) if e is not None}
        return [e for e in self.entries if e.ref in owners and self.unseen(e)]

    # ------------------------------------------------------------------ grading

    def submit(
        self,
        entry: ExerciseEntry,
        *,
        cancel: threading.Event | None = None,
        record_seen: bool = True,
    ) -> Attempt | None:
        """Grade the file through the session (None when it is missing).
        ``record_seen=False`` records the attempt only for a text not seen before (what
        ``verify`` does); a save, or ``r`` in watch, is recorded."""
        text = self.read(entry)
        if text is None:
            return None
        digest = sha256_text(text)
        record = record_seen or digest != self.entry(entry.ref).seen_sha256
        lesson, step = self.step_of(entry)
        if isinstance(step, QuizStep):
            attempt = self._answer(lesson, step, split_code(text), record=record)
        else:
            attempt = self.session.submit(
                lesson, step, text, cancel=cancel, save_as=split_code(text), record=record
            )
        if not attempt.cancelled:
            self._keep(self.entry(entry.ref).model_copy(update={"seen_sha256": digest}))
        if self.session.ref == step_ref(lesson, step):
            self.session.last_attempt = attempt  # for the tutor's context, as in the app
        return attempt

    def _answer(self, lesson: Lesson, step: QuizStep, code: str, *, record: bool) -> Attempt:
        """A quiz file's ANSWER, graded as the app grades a pick (the numbers are the
        learner's order, in which the file lists the choices); one that cannot be read is
        not gradable, and says why."""
        # (grading's pydantic models: not on the app's first screen)
        from tutor.grading.feedback import msg
        from tutor.grading.verdicts import quiz_not_gradable

        picked = parse_quiz_answer(code, len(step.choices))
        ref = step_ref(lesson, step)
        if isinstance(picked, Text):
            return Attempt(ref, quiz_not_gradable(lesson, step, picked))
        if not step.multiple and len(picked) > 1:
            return Attempt(ref, quiz_not_gradable(lesson, step, msg("quiz_file_one_answer")))
        return self.session.submit_quiz(lesson, step, picked, record=record)

    def verify(self, *, jobs: int = 1) -> list[tuple[ExerciseEntry, Attempt | None]]:
        """Grade every file once, ``jobs`` at a time, in file order. A text already graded
        is graded again but not recorded again."""
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            attempts = list(pool.map(lambda e: self.submit(e, record_seen=False), self.entries))
        return list(zip(self.entries, attempts, strict=True))

    # ------------------------------------------------------------------ hints, progress

    def hint(self, entry: ExerciseEntry) -> HintShown | None:
        """A hint on an exercise (:meth:`LearningSession.next_hint`)."""
        return self.session.next_hint(entry.ref)

    def statuses(self) -> list[ExerciseStatus]:
        store = self.session.store
        current = self.current
        rows = []
        for number, entry in enumerate(self.entries, 1):
            lesson, step = self.step_of(entry)
            progress = store.step(entry.ref)
            status: Status = (
                "passed" if progress.passed else "tried" if progress.attempts else "new"
            )
            rows.append(
                ExerciseStatus(
                    number=number,
                    entry=entry,
                    lesson=lesson,
                    step=step,
                    status=status,
                    attempts=progress.attempts,
                    best_score=progress.best_score,
                    max_score=progress.max_score,
                    hints_shown=min(progress.hints_revealed, len(step.hints)),
                    missing=self.read(entry) is None,
                    current=current is not None and current.ref == entry.ref,
                )
            )
        return rows


__all__ = ["ExerciseFiles", "ExerciseStatus"]

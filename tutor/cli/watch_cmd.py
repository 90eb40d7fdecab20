"""``tutor watch``: grade the current exercise file on every save (like rustlings).

The loop logic lives in :class:`WatchSession` (``poll()``, ``on_change()``, ``handle_key()``,
all printing through a rich ``Console``) so tests drive it with file edits and key presses,
without a terminal. :func:`run_loop` adds the clock and :class:`KeyReader` the keyboard.

Change detection polls every 50 ms: ``stat`` of every exercise file, plus a sha256 of the
current one (timestamps can be coarser than two quick saves). A change must hold still
until the next look (10 ms later) before it is graded, so an editor's half-written file is
not graded; a save that leaves the content as it was (``touch``, an editor's double
write) is not re-graded (press ``r`` for that). Files the session writes itself are
recorded as seen, so they never trigger a run. Measured on the 2-core dev machine with the
warm sandbox: save to recorded verdict in about 50-75 ms.
"""

from __future__ import annotations

import argparse
import functools
import os
import queue
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from tutor.cli.common import add_data_dir, add_device, add_lang, add_lessons
from tutor.errors import TutorError
from tutor.i18n import T

if TYPE_CHECKING:
    from rich.console import Console

    from tutor.course.models import CodeStep, Course, FixStep, Lesson
    from tutor.diagnosis.models import Diagnosis
    from tutor.grading.models import Verdict
    from tutor.i18n import Lang, Text
    from tutor.progress import ProgressStore
    from tutor.sandbox.models import RunResult
    from tutor.workspace import ExerciseEntry, Workspace

    Grader = Callable[[Lesson, CodeStep | FixStep, str], Verdict]
    Explainer = Callable[[RunResult, str], list[Diagnosis]]

POLL_INTERVAL_S = 0.05
SETTLE_S = 0.01
"""How long a changed file must hold still before it is graded."""

MSG: dict[str, Text] = {
    "keys": T(
        "keys: h hint · n next exercise · r run again · q quit",
        "按键：h 提示 · n 下一个练习 · r 重新运行 · q 退出",
    ),
    "keys_lines": T(
        "type h, n, r or q (or hint, next, run, quit) and press Enter; "
        "the end of the input quits",
        "输入 h、n、r 或 q（或 提示、下一个、运行、退出）后按回车；输入结束时退出",
    ),
    "watching": T(
        "Watching {n} exercise files in {dir}. Save a file to grade it.",
        "正在监视 {dir} 中的 {n} 个练习文件。保存文件即可评分。",
    ),
    "exercise": T("Exercise {i}/{n}", "练习 {i}/{n}"),
    "file": T("file: {path}", "文件：{path}"),
    "save_to_check": T(
        "Edit and save the file to check it (or press r).",
        "编辑并保存文件即可检查（或按 r）。",
    ),
    "passed_before": T("(passed before)", "（之前已通过）"),
    "missing": T(
        "{path} is missing; press n/r to write it again from the starter.",
        "{path} 不存在；按 n 或 r 从初始代码重新生成。",
    ),
    "rewritten": T("Wrote {path} again from the starter code.", "已用初始代码重新生成 {path}。"),
    "status.pass": T("PASSED", "通过"),
    "status.fail": T("NOT YET", "未通过"),
    "status.error": T("DID NOT FINISH", "未能运行完"),
    "status.not_gradable": T("CANNOT BE GRADED", "无法评分"),
    "score": T("score {score:g}/{max:g}", "得分 {score:g}/{max:g}"),
    "output": T("output:", "输出："),
    "output_cut": T("… {n} more lines", "… 另有 {n} 行"),
    "diagnosis": T("Diagnosis", "诊断"),
    "line": T(" (line {line})", " (第 {line} 行)"),  # as `tutor run` writes it
    "fix": T("Fix", "修改建议"),
    "no_diagnosis": T("Could not diagnose this run: {error}", "无法诊断这次运行：{error}"),
    "hint": T("Hint {i}/{n}", "提示 {i}/{n}"),
    "no_hints": T("This exercise has no hints.", "本练习没有提示。"),
    "all_hints": T("That was the last hint.", "这已经是最后一条提示了。"),
    "next": T("Well done! Next exercise:", "做得好！下一个练习："),
    "all_done": T(
        "Every exercise here has passed. Well done! (q to quit)",
        "这里的所有练习都已通过，做得好！（按 q 退出）",
    ),
    "last": T("This is the last exercise; back to the first.", "这是最后一个练习；回到第一个。"),
    "unknown_key": T("Unknown key {key!r}.", "未知按键 {key!r}。"),
    "stale": T(
        "Skipping {ref}: no such step in the course any more.",
        "跳过 {ref}：课程中已没有这个步骤。",
    ),
    "failed": T(
        "Could not grade this save: {error}. Still watching.",
        "这次保存无法评分：{error}。仍在监视。",
    ),
    "bye": T("Bye. Your progress is saved.", "再见，你的进度已保存。"),
}


QUIT_KEYS = ("q", "\x04")
"""``q``, or Ctrl+D / the end of piped input (:class:`KeyReader` sends it at EOF)."""

COMMAND_WORDS = {
    "hint": "h", "next": "n", "run": "r", "quit": "q", "exit": "q", "help": "?",
    "提示": "h", "下一个": "n", "运行": "r", "退出": "q", "帮助": "?",
}
"""Whole words a line of piped input may give instead of the key (en and zh)."""


@dataclass
class _Seen:
    mtime_ns: int
    size: int
    sha256: str | None  # None: only stat'ed (a file that is not current)


class WatchSession:
    """One ``tutor watch`` session over a workspace: no terminal, no clock, no threads."""

    def __init__(
        self,
        workspace: Workspace,
        course: Course,
        *,
        grader: Grader,
        store: ProgressStore,
        console: Console,
        lang: Lang,
        explain: Explainer | None = None,
    ) -> None:
        self.workspace = workspace
        self.course = course
        self.grader = grader
        self.explain = explain
        self.store = store
        self.console = console
        self.lang: Lang = lang
        self.manifest = workspace.load_manifest()
        self.entries: list[ExerciseEntry] = []
        for entry in self.manifest.exercises:
            try:
                course.find(entry.ref)
            except KeyError:
                self._say("stale", style="yellow", ref=entry.ref)
                continue
            self.entries.append(entry)
        if not self.entries:
            from tutor.workspace import WorkspaceError

            raise WorkspaceError(
                f"no exercise files to watch in {workspace.root}",
                hint=f"run `tutor start --dir {workspace.root}`",
            )
        self.index = self._first_index()
        self._seen: dict[str, _Seen] = {}
        self._pending: dict[str, _Seen] = {}
        for entry in self.entries:
            self._remember(entry)

    # ------------------------------------------------------------------ output

    def _t(self, msg: str, /, **values: object) -> str:
        text = MSG[msg]
        return (text.format(**values) if values else text).get(self.lang)

    def _say(self, msg: str, /, *, style: str | None = None, **values: object) -> None:
        self.console.print(self._t(msg, **values), style=style, markup=False, highlight=False)

    # ------------------------------------------------------------------ position

    @property
    def current(self) -> ExerciseEntry:
        return self.entries[self.index]

    def _first_index(self) -> int:
        passed = self.store.passed_steps()
        position = self.store.position()
        if position is not None:
            ref = "/".join(position)
            for i, entry in enumerate(self.entries):
                if entry.ref == ref and ref not in passed:
                    return i
        for i, entry in enumerate(self.entries):
            if entry.ref not in passed:
                return i
        return 0

    def _go(self, index: int) -> None:
        self.index = index
        entry = self.current
        self.store.set_position(entry.lesson_id, entry.step_id)
        if self.workspace.read(entry) is None:
            self._rewrite(entry)
        self.show_current()

    def _rewrite(self, entry: ExerciseEntry) -> None:
        """Write a missing file again; remembered as seen, so it does not trigger a run."""
        from tutor.workspace import render_exercise

        lesson, step = self.course.find(entry.ref)
        step_no = lesson.steps.index(step) + 1
        code = step.starter_for(self.lang)  # type: ignore[union-attr]
        text = render_exercise(lesson, step, step_no, self.lang, code)  # type: ignore[arg-type]
        new_entry = self.workspace.write_exercise(entry, text)
        self.entries[self.entries.index(entry)] = new_entry
        self.manifest.exercises = [
            new_entry if e.ref == entry.ref else e for e in self.manifest.exercises
        ]
        self.workspace.save_manifest(self.manifest)
        self._remember(new_entry)
        self._say("rewritten", style="yellow", path=entry.path)

    def begin(self) -> None:
        """Greet and show the current exercise."""
        self._say("watching", n=len(self.entries), dir=self.workspace.root)
        self.store.set_position(self.current.lesson_id, self.current.step_id)
        self.show_current()

    def show_current(self) -> None:
        from rich.rule import Rule

        entry = self.current
        lesson, step = self.course.find(entry.ref)
        title = f"{self._t('exercise', i=self.index + 1, n=len(self.entries))} · {entry.ref}"
        self.console.print(Rule(title, style="cyan"))
        line = f"{lesson.title.get(self.lang)} — {step.title.get(self.lang)}"
        if entry.ref in self.store.passed_steps():
            line += " " + self._t("passed_before")
        self.console.print(line, style="bold", markup=False, highlight=False)
        self._say("file", path=self.workspace.path_of(entry))
        if self.workspace.read(entry) is None:
            self._say("missing", style="yellow", path=entry.path)
        else:
            self._say("save_to_check", style="dim")

    # ------------------------------------------------------------------ files

    def _stat(self, entry: ExerciseEntry) -> os.stat_result | None:
        try:
            return self.workspace.path_of(entry).stat()
        except FileNotFoundError:
            return None

    def _snapshot(self, entry: ExerciseEntry, with_hash: bool) -> _Seen | None:
        st = self._stat(entry)
        if st is None:
            return None
        digest = None
        if with_hash:
            from tutor.workspace import sha256_text

            text = self.workspace.read(entry)
            if text is None:
                return None
            digest = sha256_text(text)
        return _Seen(st.st_mtime_ns, st.st_size, digest)

    def _remember(self, entry: ExerciseEntry) -> None:
        snap = self._snapshot(entry, with_hash=True)
        if snap is None:
            self._seen.pop(entry.path, None)
        else:
            self._seen[entry.path] = snap
        self._pending.pop(entry.path, None)

    def _changed(self, entry: ExerciseEntry, hash_it: bool) -> bool:
        """Has this file's content changed since last seen, and held still for a poll?"""
        snap = self._snapshot(entry, with_hash=hash_it)
        if snap is None:
            return False
        seen = self._seen.get(entry.path)
        same_stat = seen is not None and (seen.mtime_ns, seen.size) == (snap.mtime_ns, snap.size)
        if same_stat and (not hash_it or snap.sha256 == seen.sha256):  # type: ignore[union-attr]
            self._pending.pop(entry.path, None)
            return False
        if self._pending.get(entry.path) != snap:
            self._pending[entry.path] = snap  # wait one poll: the editor may still be writing
            return False
        previous_hash = seen.sha256 if seen else None
        self._remember(entry)
        new = self._seen.get(entry.path)
        return new is None or previous_hash is None or new.sha256 != previous_hash

    @property
    def settling(self) -> bool:
        """A change was seen and waits for one more look before it is graded."""
        return bool(self._pending)

    def poll(self) -> Verdict | None:
        """Check the files once; grade the one that changed (switching to it). Call ~20x/s."""
        changed = [
            i for i, entry in enumerate(self.entries) if self._changed(entry, i == self.index)
        ]
        if not changed:
            return None
        target = self.index if self.index in changed else changed[0]
        if target != self.index:
            self.index = target
            self.store.set_position(self.current.lesson_id, self.current.step_id)
            self.show_current()
        return self.on_change()

    # ------------------------------------------------------------------ grading

    def on_change(self) -> Verdict | None:
        """Grade the current file, show the verdict, record it; on a pass move on."""
        from tutor.workspace import split_code

        entry = self.current
        text = self.workspace.read(entry)
        if text is None:
            self._say("missing", style="yellow", path=entry.path)
            return None
        lesson, step = self.course.find(entry.ref)
        try:
            verdict = self.grader(lesson, step, text)  # type: ignore[arg-type]
        except TutorError as exc:  # e.g. the device went away: say so, keep watching
            self._say("failed", style="red", error=exc)
            return None
        self.store.record_attempt(
            entry.ref,
            split_code(text),
            passed=verdict.passed,
            score=verdict.score,
            max_score=verdict.max_score,
        )
        self._show_verdict(verdict)
        if not verdict.passed and verdict.run is not None and self.explain is not None:
            try:
                self._show_diagnoses(self.explain(verdict.run, text))
            except TutorError as exc:
                self._say("no_diagnosis", style="red", error=exc)
        if verdict.passed:
            self._advance()
        return verdict

    def _show_verdict(self, verdict: Verdict) -> None:
        style = {"pass": "bold green", "fail": "bold yellow"}.get(verdict.status, "bold red")
        self.console.print(
            f"{self._t('status.' + verdict.status)}  "
            f"{self._t('score', score=verdict.score, max=verdict.max_score)}",
            style=style,
            markup=False,
            highlight=False,
        )
        if verdict.message is not None:
            self.console.print(verdict.message.get(self.lang), markup=False, highlight=False)
        overall = verdict.message.get(self.lang) if verdict.message is not None else None
        for check in verdict.checks:
            mark, mstyle = ("✓", None) if check.status == "pass" else ("✗", "red")
            message = check.message.get(self.lang)
            # when the run did not finish every check repeats the overall message: say it once
            line = f"  {mark} {check.label.get(self.lang)}"
            if message != overall:
                line += f": {message}"
            self.console.print(line, style=mstyle, markup=False, highlight=False)
            output = check.output_for(self.lang)
            if output and check.status != "pass" and output not in message:
                if overall is not None and output in overall:
                    continue
                for out_line in output.splitlines():
                    self.console.print(f"      {out_line}", style="dim", markup=False)
        run = verdict.run
        if run is not None and run.stdout.strip():
            lines = run.stdout.rstrip("\n").splitlines()
            self._say("output", style="dim")
            for line in lines[:20]:
                self.console.print(f"  {line}", markup=False, highlight=False)
            if len(lines) > 20:
                self._say("output_cut", style="dim", n=len(lines) - 20)

    def _show_diagnoses(self, diagnoses: list[Diagnosis]) -> None:
        for diagnosis in diagnoses:
            where = self._t("line", line=diagnosis.line) if diagnosis.line else ""
            self.console.print(
                f"{self._t('diagnosis')}: {diagnosis.title.get(self.lang)}{where}",
                style="bold magenta",
                markup=False,
                highlight=False,
            )
            self.console.print(
                f"  {diagnosis.explanation.get(self.lang)}", markup=False, highlight=False
            )
            self.console.print(
                f"  {self._t('fix')}: {diagnosis.fix.get(self.lang)}",
                markup=False,
                highlight=False,
            )

    def _advance(self) -> None:
        passed = self.store.passed_steps()
        n = len(self.entries)
        for offset in range(1, n + 1):
            i = (self.index + offset) % n
            if self.entries[i].ref not in passed:
                self._say("next", style="bold green")
                self._go(i)
                return
        self._say("all_done", style="bold green")

    # ------------------------------------------------------------------ keys

    def handle_key(self, key: str) -> bool:
        """React to one key (or a command word such as ``hint``); False means quit."""
        key = key.strip().lower() if key.strip() else key
        key = COMMAND_WORDS.get(key, key)
        if key in QUIT_KEYS:
            self._say("bye")
            return False
        if key == "h":
            self.reveal_hint()
        elif key == "n":
            if self.index == len(self.entries) - 1:
                self._say("last", style="dim")
            self._go((self.index + 1) % len(self.entries))
        elif key == "r":
            if self.workspace.read(self.current) is None:
                self._rewrite(self.current)
            self.on_change()
        elif key == "?":
            self.show_keys()
        elif key.strip():
            self._say("unknown_key", style="dim", key=key)
            self._say("keys", style="dim")
        return True

    def show_keys(self, *, single_keys: bool = True) -> None:
        """The key help: single keys on a terminal; letters + Enter when stdin is a pipe."""
        self._say("keys", style="dim")
        if not single_keys:
            self._say("keys_lines", style="dim")

    def reveal_hint(self) -> None:
        entry = self.current
        _, step = self.course.find(entry.ref)
        hints = step.hints
        if not hints:
            self._say("no_hints", style="dim")
            return
        shown = self.store.hints_revealed(entry.ref)
        if shown >= len(hints):
            self._say("all_hints", style="dim")
            shown = len(hints) - 1
        else:
            self.store.set_hints_revealed(entry.ref, shown + 1)
        self.console.print(
            f"{self._t('hint', i=shown + 1, n=len(hints))}: {hints[shown].get(self.lang)}",
            style="cyan",
            markup=False,
            highlight=False,
        )


# ---------------------------------------------------------------------- keyboard


class KeyReader:
    """Keys from stdin without blocking the watch loop.

    On a terminal, a thread reads single characters in cbreak mode (no Enter needed; Ctrl+C
    still interrupts); otherwise (a pipe) it reads lines, passes on each as a command
    (``h`` or ``hint``), and at the end of the input passes on Ctrl+D, which quits. The
    terminal mode is restored by :meth:`close`.
    """

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream if stream is not None else sys.stdin
        self.keys: queue.Queue[str] = queue.Queue()
        self._saved_mode: list | None = None  # type: ignore[type-arg]
        self.is_tty = False

    def start(self) -> None:
        try:
            fd = self.stream.fileno()
            self.is_tty = os.isatty(fd)
        except (AttributeError, OSError, ValueError):
            fd, self.is_tty = -1, False
        if self.is_tty:
            import termios
            import tty

            self._saved_mode = termios.tcgetattr(fd)
            tty.setcbreak(fd)
            target = self._read_chars
        else:
            target = self._read_lines
        threading.Thread(target=target, args=(fd,), daemon=True, name="watch-keys").start()

    def _read_chars(self, fd: int) -> None:
        while True:
            try:
                data = os.read(fd, 1)
            except OSError:
                return
            if not data:
                return
            self.keys.put(data.decode("utf-8", "replace"))

    def _read_lines(self, _fd: int) -> None:
        # Each line is one command: a key (`h`) or a word (`hint`, `提示`). The end of the
        # input ends the session, as Ctrl+D does on a terminal: `printf 'r\n' | tutor watch`
        # grades once and exits 0 instead of watching forever with no way to be told to stop.
        for line in self.stream:
            command = line.strip()
            if command:
                self.keys.put(command)
        self.keys.put(QUIT_KEYS[1])

    def get(self) -> str | None:
        try:
            return self.keys.get_nowait()
        except queue.Empty:
            return None

    def close(self) -> None:
        if self._saved_mode is not None:
            import termios

            termios.tcsetattr(self.stream.fileno(), termios.TCSADRAIN, self._saved_mode)
            self._saved_mode = None


def run_loop(
    session: WatchSession,
    next_key: Callable[[], str | None],
    *,
    interval_s: float = POLL_INTERVAL_S,
    settle_s: float = SETTLE_S,
    stop: threading.Event | None = None,
) -> None:
    """Poll files and keys until ``q`` (or ``stop`` is set)."""
    while stop is None or not stop.is_set():
        key = next_key()
        while key is not None:
            if not session.handle_key(key):
                return
            key = next_key()
        session.poll()
        # a change just seen is looked at again soon, so a save is graded well within 200 ms
        time.sleep(settle_s if session.settling else interval_s)


# ---------------------------------------------------------------------- CLI


def add_exercise_options(parser: argparse.ArgumentParser) -> None:
    """Options of start/watch/verify. The global ones are repeated so they also work after
    the subcommand; SUPPRESS keeps a value given before the subcommand from being reset.
    Every ``tutor`` start builds these: nothing heavier than :mod:`tutor.paths` here."""
    from tutor.paths import EXERCISE_DIR

    parser.add_argument(
        "--dir",
        type=Path,
        default=EXERCISE_DIR,
        metavar="DIR",
        help=f"the exercise folder (default: ./{EXERCISE_DIR})",
    )
    add_lang(parser)
    add_lessons(parser, "folder of lesson YAML files (default: the one the exercises came from)")
    add_data_dir(parser)


@dataclass
class ExerciseContext:
    """What start/watch/verify work with, opened from the command line."""

    workspace: Workspace
    course: Course
    lang: Lang
    store: ProgressStore
    grader: Grader
    explain: Explainer | None


@contextmanager
def open_exercises(args: argparse.Namespace) -> Iterator[ExerciseContext]:
    """Open the workspace, its course, the progress store and a warm sandbox."""
    from tutor.course import load_course
    from tutor.diagnosis import explain
    from tutor.grading import ExpectedCache, grade_step
    from tutor.paths import private_folders
    from tutor.progress import ProgressStore
    from tutor.sandbox import DeviceError, Sandbox
    from tutor.workspace import Workspace

    workspace = Workspace(args.dir)
    manifest = workspace.load_manifest()
    lessons_dir = getattr(args, "lessons", None)
    if lessons_dir is None and manifest.lessons_dir is not None:
        lessons_dir = Path(manifest.lessons_dir)
    course = load_course(lessons_dir)
    lang: Lang = getattr(args, "lang", None) or manifest.lang
    sandbox = Sandbox(hide=private_folders(lessons_dir, getattr(args, "data_dir", None)))
    sandbox.start()  # warms torch up while the rest opens
    try:
        try:
            device = sandbox.resolve_device(getattr(args, "device", None) or "auto")
        except DeviceError as exc:
            raise TutorError(str(exc), hint="pick one with --device") from exc
        cache = ExpectedCache(None)
        store = ProgressStore.default(getattr(args, "data_dir", None))
        try:
            yield ExerciseContext(
                workspace=workspace,
                course=course,
                lang=lang,
                store=store,
                grader=functools.partial(
                    grade_step, runner=sandbox, device=device, cache=cache
                ),
                explain=explain,
            )
        finally:
            store.close()
    finally:
        sandbox.close()


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(
        "watch",
        help="grade your exercise files every time you save one",
        description=(
            "Watches the exercise files written by `tutor start` and grades the current one "
            "every time it is saved: verdict, feedback per check, a diagnosis of any error. "
            "Keys: h next hint, n next exercise, r run again, q quit. A passed exercise moves "
            "you on to the next. Progress is shared with the app."
        ),
    )
    add_exercise_options(parser)
    add_device(parser)


def run(args: argparse.Namespace) -> int:
    from rich.console import Console

    console = Console(highlight=False, soft_wrap=True)
    with open_exercises(args) as ctx:
        session = WatchSession(
            ctx.workspace,
            ctx.course,
            grader=ctx.grader,
            store=ctx.store,
            console=console,
            lang=ctx.lang,
            explain=ctx.explain,
        )
        keys = KeyReader()
        keys.start()
        try:
            session.begin()
            session.show_keys(single_keys=keys.is_tty)
            run_loop(session, keys.get)
        finally:
            keys.close()
    return 0

"""``tutor watch``: grade the current exercise file on every save (like rustlings).

:class:`WatchSession` presents the learning session (:mod:`tutor.learning.exercises`) to a
rich ``Console``: ``on_files()`` for what the watcher saw, ``handle_key()`` for a key, so
tests drive it with real file writes and keys, without a terminal. :func:`run_loop` takes
both from one queue, which :class:`FileWatcher` (watchfiles, in a thread) and
:class:`KeyReader` (stdin, in a thread) fill.

The watcher reports a batch once the folder has been quiet for :data:`QUIET_MS` (an editor
that writes a file in pieces, or saves by writing a temporary file and renaming it over the
exercise, is graded once, whole). A save that leaves the text as it was last written or
graded (``touch``, an editor's double write, tutor's own writes) is not graded again;
press ``r`` for that.
"""

from __future__ import annotations

import argparse
import os
import queue
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from tutor.cli.exercise_files import add_exercise_options
from tutor.cli.messages import msg
from tutor.errors import TutorError
from tutor.i18n import T

if TYPE_CHECKING:
    from collections.abc import Callable

    from rich.console import Console

    from tutor.learning import Attempt
    from tutor.learning.exercises import ExerciseFiles
    from tutor.workspace import ExerciseEntry

QUIET_MS = 100
"""How long the folder must be quiet after a change before the batch is reported."""
MAX_WAIT_MS = 1600
"""A folder that never goes quiet (a build writing into it) is still reported this often."""
IDLE_MS = 200
"""How often the watcher thread wakes with nothing to report, to see whether to stop."""
READY_TIMEOUT_S = 10.0
"""At most this long for the watcher to be in place before the first exercise is shown."""

QUIT_KEYS = ("q", "\x04")
"""``q``, or Ctrl+D / the end of piped input (:class:`KeyReader` sends it at EOF)."""

COMMAND_WORDS = {
    "hint": "h", "next": "n", "run": "r", "quit": "q", "exit": "q", "help": "?",
    "提示": "h", "下一个": "n", "运行": "r", "退出": "q", "帮助": "?",
}
"""Whole words a line of piped input may give instead of the key (en and zh)."""


@dataclass(frozen=True)
class KeyPressed:
    key: str


@dataclass(frozen=True)
class FilesChanged:
    paths: frozenset[str]


@dataclass(frozen=True)
class WatcherFailed:
    error: str


Event = KeyPressed | FilesChanged | WatcherFailed


class WatchSession:
    """One ``tutor watch`` over a folder of exercise files: no terminal, no clock, no threads."""

    def __init__(self, files: ExerciseFiles, console: Console) -> None:
        from tutor.cli.exercise_view import AttemptView

        self.files = files
        self.view = AttemptView(console, files.session.lang)
        self.view.stale(files.stale)
        self.entry: ExerciseEntry = files.starting_entry()

    @property
    def current(self) -> ExerciseEntry:
        return self.files.entry(self.entry.ref)

    @property
    def entries(self) -> list[ExerciseEntry]:
        return self.files.entries

    def _say(self, key: str, /, *, style: str | None = None, **values: object) -> None:
        self.view.say(msg(f"watch.{key}", **values), style=style)

    # ------------------------------------------------------------------ position

    def begin(self) -> None:
        """Greet and show the current exercise."""
        self._say("watching", n=len(self.entries), dir=self.files.workspace.root)
        self._go(self.entry)

    def _go(self, entry: ExerciseEntry) -> None:
        missing = self.files.read(entry) is None
        self.entry = self.files.go(entry)
        if missing:
            self._say("rewritten", style="yellow", path=entry.path)
        self.show_current()

    def show_current(self) -> None:
        from rich.rule import Rule

        entry = self.current
        lesson, step = self.files.step_of(entry)
        number, total = self.files.number_of(entry), len(self.entries)
        title = f"{self.view.t(msg('watch.exercise', i=number, n=total))} · {entry.ref}"
        self.view.console.print(Rule(title, style="cyan"))
        lang = self.view.lang
        line = f"{lesson.title.get(lang)} — {step.title.get(lang)}"
        if entry.ref in self.files.session.store.passed_steps():
            line += " " + self.view.t(msg("watch.passed_before"))
        self.view.line(line, style="bold")
        self._say("file", path=self.files.workspace.path_of(entry))
        if self.files.read(entry) is None:
            self._say("missing", style="yellow", path=entry.path)
        else:
            self._say("save_to_check", style="dim")

    # ------------------------------------------------------------------ files

    def on_files(self, paths: frozenset[str] | set[str]) -> Attempt | None:
        """What the watcher reported: grade the exercise whose text changed, switching to
        it (the current one when several did: the others wait for their next save)."""
        changed = self.files.changed(paths)
        if not changed:
            current = self.current
            owners = {e.ref for e in map(self.files.owner_of, paths) if e is not None}
            if current.ref in owners and self.files.read(current) is None:
                self._say("missing", style="yellow", path=current.path)
            return None
        if self.entry.ref not in {e.ref for e in changed}:
            self.entry = self.files.go(changed[0])
            self.show_current()
        return self.grade()

    def grade(self) -> Attempt | None:
        """Grade the current file, show the attempt (recorded by the session); on a pass
        move on to the next exercise not passed."""
        entry = self.current
        try:
            attempt = self.files.submit(entry)
        except TutorError as exc:  # e.g. the device went away: say so, keep watching
            self._say("failed", style="red", error=exc.message_in(self.view.lang))
            return None
        if attempt is None:
            self._say("missing", style="yellow", path=entry.path)
            return None
        self.view.attempt(attempt)
        if attempt.verdict.passed:
            following = self.files.next_unpassed(entry)
            if following is None:
                self._say("all_done", style="bold green")
            else:
                self._say("next", style="bold green")
                self._go(following)
        return attempt

    # ------------------------------------------------------------------ keys

    def handle_key(self, key: str) -> bool:
        """React to one key (or a command word such as ``hint``); False means quit."""
        key = key.strip().lower() if key.strip() else key
        key = COMMAND_WORDS.get(key, key)
        if key in QUIT_KEYS:
            self._say("bye")
            return False
        if key == "h":
            self.view.hint(self.files.hint(self.current))
        elif key == "n":
            number = self.files.number_of(self.current)
            if number == len(self.entries):
                self._say("last", style="dim")
            self._go(self.entries[number % len(self.entries)])
        elif key == "r":
            if self.files.read(self.current) is None:
                self.entry = self.files.restore(self.current)
                self._say("rewritten", style="yellow", path=self.entry.path)
            self.grade()
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


# ---------------------------------------------------------------------- event sources


class FileWatcher:
    """Reports changes under ``root`` as :class:`FilesChanged` events (watchfiles, which
    uses inotify / FSEvents / ReadDirectoryChangesW, in a thread).

    ``ready`` is set once the watcher is in place: a change after that is reported."""

    def __init__(self, root: Path, events: queue.Queue[Event]) -> None:
        self.root = Path(root)
        self.events = events
        self.ready = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True, name="watch-files")

    def start(self) -> None:
        self._thread.start()

    def _watch(self) -> None:
        import watchfiles

        try:
            for changes in watchfiles.watch(
                self.root,
                step=QUIET_MS,
                debounce=MAX_WAIT_MS,
                rust_timeout=IDLE_MS,
                yield_on_timeout=True,  # an empty batch now and then: ready, and a stop check
                stop_event=self._stop,
                raise_interrupt=False,
            ):
                self.ready.set()
                if changes:
                    self.events.put(FilesChanged(frozenset(path for _, path in changes)))
        except Exception as exc:  # a folder that went away, too many watches: say why
            self.events.put(WatcherFailed(str(exc)))
        finally:
            self.ready.set()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


# ---------------------------------------------------------------------- keyboard


class KeyReader:
    """Keys from stdin without blocking the watch loop.

    On a terminal, a thread reads single characters in cbreak mode (no Enter needed; Ctrl+C
    still interrupts); otherwise (a pipe) it reads lines, passes on each as a command
    (``h`` or ``hint``), and at the end of the input passes on Ctrl+D, which quits. The
    terminal mode is restored by :meth:`close`.
    """

    def __init__(self, events: queue.Queue[Event], stream: TextIO | None = None) -> None:
        self.stream = stream if stream is not None else sys.stdin
        self.events = events
        self._saved_mode: list | None = None
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
            target: Callable[[int], None] = self._read_chars
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
            self.events.put(KeyPressed(data.decode("utf-8", "replace")))

    def _read_lines(self, _fd: int) -> None:
        # Each line is one command: a key (`h`) or a word (`hint`, `提示`). The end of the
        # input ends the session, as Ctrl+D does on a terminal: `printf 'r\n' | tutor watch`
        # grades once and exits 0 instead of watching forever with no way to be told to stop.
        for line in self.stream:
            command = line.strip()
            if command:
                self.events.put(KeyPressed(command))
        self.events.put(KeyPressed(QUIT_KEYS[1]))

    def close(self) -> None:
        if self._saved_mode is not None:
            import termios

            termios.tcsetattr(self.stream.fileno(), termios.TCSADRAIN, self._saved_mode)
            self._saved_mode = None


def run_loop(session: WatchSession, events: queue.Queue[Event]) -> None:
    """Handle keys and file changes as they come, until ``q`` (or the end of piped input)."""
    while True:
        event = events.get()
        if isinstance(event, KeyPressed):
            if not session.handle_key(event.key):
                return
        elif isinstance(event, FilesChanged):
            session.on_files(event.paths)
        else:
            raise TutorError(
                T(f"cannot watch the exercise folder any more: {event.error}",
                  f"无法继续监视练习文件夹：{event.error}"),
                hint=T("check the folder and run `tutor watch` again",
                       "请检查该文件夹后重新运行 `tutor watch`"),
            )


# ---------------------------------------------------------------------- CLI


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_exercise_options(parser, runs=True)


def run(args: argparse.Namespace) -> int:
    from tutor.cli.exercise_files import open_with_view

    with open_with_view(args, runs=True) as (files, view):
        session = WatchSession(files, view.console)
        events: queue.Queue[Event] = queue.Queue()
        watcher = FileWatcher(files.workspace.root, events)
        keys = KeyReader(events)
        watcher.start()
        keys.start()
        try:
            watcher.ready.wait(READY_TIMEOUT_S)  # a save after the greeting is always seen
            session.begin()
            session.show_keys(single_keys=keys.is_tty)
            run_loop(session, events)
        finally:
            keys.close()
            watcher.close()
    return 0

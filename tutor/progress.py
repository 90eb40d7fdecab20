"""Learner progress in SQLite: passed steps, attempts, last code, hints, where they left off.

One database file under the user data directory, shared by the TUI and ``tutor watch``
(which may run at the same time). Why SQLite in WAL mode: every write below is one
transaction, so a crash or ``kill -9`` in the middle of a write leaves the previous state
intact, and readers never block the writer. The schema version lives in
``PRAGMA user_version`` so a later release can migrate an older file in place.

Steps are named by ``LESSON/STEP`` references, the same everywhere.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Literal

from tutor.errors import TutorError
from tutor.i18n import Catalog
from tutor.paths import data_root

msg = Catalog(Path(__file__).with_name("progress_messages.yaml"))

SCHEMA_VERSION = 1
DB_NAME = "progress.sqlite3"

_SCHEMA_V1 = """
CREATE TABLE steps (
    step_ref       TEXT PRIMARY KEY,
    attempts       INTEGER NOT NULL DEFAULT 0,
    passed         INTEGER NOT NULL DEFAULT 0,
    best_score     REAL,
    max_score      REAL,
    last_code      TEXT,
    hints_revealed INTEGER NOT NULL DEFAULT 0,
    updated_at     REAL NOT NULL
);
CREATE TABLE attempts (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    step_ref  TEXT NOT NULL,
    code      TEXT NOT NULL,
    passed    INTEGER NOT NULL,
    score     REAL NOT NULL,
    max_score REAL NOT NULL,
    at        REAL NOT NULL
);
CREATE INDEX attempts_by_step ON attempts (step_ref);
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
"""


_STEP_COLUMNS = frozenset(
    {"step_ref", "attempts", "passed", "best_score", "max_score", "last_code",
     "hints_revealed", "updated_at"}
)


class ProgressError(TutorError):
    """The progress file cannot be opened or written (unreadable, from a newer version...)."""


def _is_busy(exc: sqlite3.Error) -> bool:
    return isinstance(exc, sqlite3.OperationalError) and (
        "locked" in str(exc) or "busy" in str(exc)
    )


def describe_failure(path: Path, exc: sqlite3.Error,
                     doing: Literal["open", "save", "read"]) -> ProgressError:
    """One clear message for what SQLite said (the file is left as it was: every write is
    one transaction, rolled back on failure); ``doing`` is ``open``, ``save`` or ``read``."""
    text = str(exc)
    if _is_busy(exc):
        kind = "locked"
    elif "disk is full" in text or "disk I/O" in text:
        kind = "disk_failing"
    elif isinstance(exc, sqlite3.DatabaseError) and (
        "malformed" in text or "not a database" in text or "corrupt" in text
    ):
        kind = "damaged"
    else:
        kind = "failed"
    return ProgressError(msg(kind, doing=msg(f"{doing}_doing"), path=str(path), error=text),
                         hint=msg(f"{kind}_hint"))


@dataclass(frozen=True)
class StepProgress:
    """Everything the store knows about one step, for faces that show a step's state."""

    step_ref: str
    attempts: int = 0
    passed: bool = False
    best_score: float | None = None
    max_score: float | None = None
    last_code: str | None = None
    hints_revealed: int = 0


def default_data_dir() -> Path:
    """The per-user data directory (``platformdirs.user_data_dir("autograd-tutor")``)."""
    return data_root()


def _check_ref(step_ref: str) -> None:
    lesson, sep, step = step_ref.partition("/")
    if not (lesson and sep and step) or "/" in step:
        raise ValueError(f"step reference must look like 'LESSON/STEP', got {step_ref!r}")


class ProgressStore:
    """The learner's progress in one SQLite file. Safe for several processes and threads."""

    def __init__(self, path: Path | str, *, busy_timeout_s: float = 10.0) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._busy_timeout_s = busy_timeout_s
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ProgressError(
                msg("no_folder", folder=str(self.path.parent), error=exc.strerror),
                hint=msg("no_folder_hint"),
            ) from exc
        try:
            # isolation_level=None: no implicit transactions; each write says BEGIN itself.
            self._conn = sqlite3.connect(
                self.path,
                timeout=busy_timeout_s,
                isolation_level=None,
                check_same_thread=False,
            )
            self._conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_s * 1000)}")
            # FULL: a commit is on disk when it returns; progress writes are rare, so cheap.
            self._conn.execute("PRAGMA synchronous = FULL")
            # the schema first: a file that is not ours is refused before anything changes it
            self._retry_busy(self._migrate)
            # switching to WAL needs the file to itself for a moment, and SQLite answers
            # "database is locked" at once (no busy wait) while another process opens it
            self._retry_busy(lambda: self._conn.execute("PRAGMA journal_mode = WAL"))
        except sqlite3.Error as exc:
            self._conn_close_quietly()
            raise describe_failure(self.path, exc, "open") from exc
        except ProgressError:
            self._conn_close_quietly()
            raise

    @classmethod
    def default(cls, data_dir: Path | None = None) -> ProgressStore:
        """The store in ``data_dir`` (default: the user data directory)."""
        return cls((data_dir if data_dir is not None else default_data_dir()) / DB_NAME)

    # ------------------------------------------------------------------ plumbing

    def _retry_busy(self, action: Callable[[], object]) -> None:
        """``action``, again while another process holds the file, up to the busy timeout."""
        deadline = time.monotonic() + self._busy_timeout_s
        delay = 0.005
        while True:
            try:
                action()
                return
            except sqlite3.Error as exc:
                if not _is_busy(exc) or time.monotonic() >= deadline:
                    raise
            time.sleep(delay)
            delay = min(delay * 2, 0.1)

    def _conn_close_quietly(self) -> None:
        conn = getattr(self, "_conn", None)
        if conn is not None:
            with contextlib.suppress(sqlite3.Error):
                conn.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction. IMMEDIATE takes the write lock up front, so two processes
        never both read-then-write the same row (no lost increments)."""
        with self._lock:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise describe_failure(self.path, exc, "save") from exc
            try:
                yield self._conn
                self._conn.execute("COMMIT")
            except BaseException as exc:
                if self._conn.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
                        self._conn.execute("ROLLBACK")
                if isinstance(exc, sqlite3.Error):
                    raise describe_failure(self.path, exc, "save") from exc
                raise

    def _read(self, sql: str, params: tuple[object, ...] = ()) -> list[tuple[Any, ...]]:
        """The rows of a query; their values are SQLite's (dynamically typed), each reader
        says what it expects of them."""
        with self._lock:
            try:
                return self._conn.execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                raise describe_failure(self.path, exc, "read") from exc

    def _migrate(self) -> None:
        with self._write() as conn:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise ProgressError(
                    msg("newer_schema", path=str(self.path), found=version,
                        known=SCHEMA_VERSION),
                    hint=msg("newer_schema_hint"),
                )
            tables = {str(row[0]) for row in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'")}
            if version == 0 and not tables - {"sqlite_sequence"}:
                for statement in _SCHEMA_V1.split(";"):
                    if statement.strip():
                        conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                return
            columns = {str(row[1]) for row in conn.execute("PRAGMA table_info(steps)")}
            if version == 0 or not {"steps", "attempts", "meta"} <= tables or not (
                columns >= _STEP_COLUMNS
            ):
                raise ProgressError(msg("not_ours", path=str(self.path)),
                                    hint=msg("not_ours_hint"))

    def _ensure_step(self, conn: sqlite3.Connection, step_ref: str, now: float) -> None:
        conn.execute(
            "INSERT OR IGNORE INTO steps (step_ref, updated_at) VALUES (?, ?)", (step_ref, now)
        )

    # ------------------------------------------------------------------ writes

    def record_attempt(
        self, step_ref: str, code: str, *, passed: bool, score: float, max_score: float
    ) -> None:
        """One graded submission: counts the attempt, keeps the code; a pass is for good."""
        _check_ref(step_ref)
        now = time.time()
        with self._write() as conn:
            self._ensure_step(conn, step_ref, now)
            conn.execute(
                "INSERT INTO attempts (step_ref, code, passed, score, max_score, at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (step_ref, code, int(passed), float(score), float(max_score), now),
            )
            conn.execute(
                "UPDATE steps SET attempts = attempts + 1, passed = MAX(passed, ?),"
                " best_score = MAX(COALESCE(best_score, ?), ?), max_score = ?,"
                " last_code = ?, updated_at = ? WHERE step_ref = ?",
                (int(passed), score, score, max_score, code, now, step_ref),
            )

    def save_code(self, step_ref: str, code: str) -> None:
        """Keep the code of a step without grading it (restored when the learner comes back)."""
        self._set_step(step_ref, "last_code", code)

    def set_hints_revealed(self, step_ref: str, n: int) -> None:
        if n < 0:
            raise ValueError(f"hints revealed cannot be negative, got {n}")
        self._set_step(step_ref, "hints_revealed", n)

    def _set_step(self, step_ref: str, column: Literal["last_code", "hints_revealed"],
                  value: str | int) -> None:
        """One column of a step's row (the row made first where there is none yet)."""
        _check_ref(step_ref)
        now = time.time()
        with self._write() as conn:
            self._ensure_step(conn, step_ref, now)
            conn.execute(
                f"UPDATE steps SET {column} = ?, updated_at = ? WHERE step_ref = ?",
                (value, now, step_ref),
            )

    def set_position(self, lesson_id: str, step_id: str) -> None:
        """Where the learner is; both keys change in one transaction."""
        with self._write() as conn:
            conn.executemany(
                "INSERT INTO meta (key, value) VALUES (?, ?)"
                " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                [("position.lesson", lesson_id), ("position.step", step_id)],
            )

    # ------------------------------------------------------------------ reads

    def passed_steps(self) -> set[str]:
        return {str(row[0]) for row in self._read("SELECT step_ref FROM steps WHERE passed = 1")}

    def attempts(self, step_ref: str) -> int:
        rows = self._read("SELECT attempts FROM steps WHERE step_ref = ?", (step_ref,))
        return int(rows[0][0]) if rows else 0

    def last_code(self, step_ref: str) -> str | None:
        rows = self._read("SELECT last_code FROM steps WHERE step_ref = ?", (step_ref,))
        return rows[0][0] if rows else None

    def hints_revealed(self, step_ref: str) -> int:
        rows = self._read("SELECT hints_revealed FROM steps WHERE step_ref = ?", (step_ref,))
        return int(rows[0][0]) if rows else 0

    def position(self) -> tuple[str, str] | None:
        rows = dict(
            self._read(
                "SELECT key, value FROM meta WHERE key IN ('position.lesson', 'position.step')"
            )
        )
        lesson, step = rows.get("position.lesson"), rows.get("position.step")
        if not lesson or not step:
            return None
        return str(lesson), str(step)

    def step(self, step_ref: str) -> StepProgress:
        """All that is known about one step (defaults when nothing is)."""
        columns = [f.name for f in fields(StepProgress)]  # the steps table names them alike
        rows = self._read(f"SELECT {', '.join(columns)} FROM steps WHERE step_ref = ?",
                          (step_ref,))
        if not rows:
            return StepProgress(step_ref=step_ref)
        row = dict(zip(columns, rows[0], strict=True))
        return StepProgress(**{**row, "passed": bool(row["passed"])})

    def attempt_count_logged(self, step_ref: str) -> int:
        """Rows in the attempt log for a step (equals :meth:`attempts`; used to audit)."""
        rows = self._read("SELECT COUNT(*) FROM attempts WHERE step_ref = ?", (step_ref,))
        return int(rows[0][0])

    # ------------------------------------------------------------------ lifetime

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> ProgressStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

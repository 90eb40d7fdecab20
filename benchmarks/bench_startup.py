"""Start-up time of the TUI as a person sees it (issue 7: "first screen usable in under 1 s").

Starts ``tutor`` in a detached tmux session and polls the pane every 10 ms until the first
lesson's text appears; the time from the tmux call to that capture is one sample. Repeats
``--runs`` times (cold processes; the lesson cache is warm, as it is for a learner) and prints
median/min/max, then the same for ``python -c "import textual"`` run the same way, as a floor.

    .venv/bin/python benchmarks/bench_startup.py [--runs 7] [--size 100x30] [--lang en]
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENV_BIN = ROOT / ".venv" / "bin"
READY_TEXT = {"en": "Tensors that track", "zh": "会记录历史的张量"}
FLOOR_MARK = "imported-textual"
POLL_S = 0.01
LIMIT_S = 30.0


SOCKET = f"bench-startup-{os.getpid()}"
"""A private tmux server: other tmux sessions on the machine neither see nor disturb ours."""


def tmux(*args: str) -> str:
    done = subprocess.run(
        ["tmux", "-L", SOCKET, *args], capture_output=True, text=True, check=False
    )
    return done.stdout


def time_to_text(session: str, command: str, text: str, size: tuple[int, int]) -> float:
    """Seconds from starting ``command`` in a fresh tmux session until ``text`` is on screen."""
    width, height = size
    began = time.perf_counter()
    tmux("new-session", "-d", "-s", session, "-x", str(width), "-y", str(height), command)
    try:
        while time.perf_counter() - began < LIMIT_S:
            if text in tmux("capture-pane", "-p", "-t", session):
                return time.perf_counter() - began
            time.sleep(POLL_S)
        raise SystemExit(
            f"{text!r} did not appear within {LIMIT_S:.0f} s:\n"
            + tmux("capture-pane", "-p", "-t", session)
        )
    finally:
        tmux("kill-session", "-t", session)


def sample(name: str, runs: int, once: Callable[[], float]) -> list[float]:
    once()  # warm the file cache; not counted
    times = [once() for _ in range(runs)]
    print(
        f"{name:<18} median {statistics.median(times):.3f} s   "
        f"min {min(times):.3f} s   max {max(times):.3f} s   ({runs} runs)"
    )
    return times


def main() -> int:
    try:
        return bench()
    finally:
        tmux("kill-server")


def bench() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--size", default="100x30", help="terminal WIDTHxHEIGHT")
    parser.add_argument("--lang", choices=sorted(READY_TEXT), default="en")
    parser.add_argument("--no-floor", action="store_true", help="skip the import-textual floor")
    args = parser.parse_args()
    width, height = (int(n) for n in args.size.lower().split("x"))
    size = (width, height)
    session = "bench"
    with tempfile.TemporaryDirectory() as data_dir:
        tutor = (
            f"cd {shlex.quote(str(ROOT))} && TUTOR_LANG={args.lang} "
            f"{shlex.quote(str(VENV_BIN / 'tutor'))} --data-dir {shlex.quote(data_dir)}"
        )
        sample(
            f"tutor ({args.lang})",
            args.runs,
            lambda: time_to_text(session, tutor, READY_TEXT[args.lang], size),
        )
    if not args.no_floor:
        floor = (
            f"{shlex.quote(str(VENV_BIN / 'python'))} -c "
            f"\"import textual, time; print('{FLOOR_MARK}'); time.sleep(5)\""
        )
        sample("import textual", args.runs, lambda: time_to_text(session, floor, FLOOR_MARK, size))
    return 0


if __name__ == "__main__":
    sys.exit(main())

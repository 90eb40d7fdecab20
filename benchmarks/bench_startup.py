"""Start-up time of the TUI as a person sees it (issue 7: "first screen usable in under 1 s").

Starts ``tutor`` in a detached tmux session and polls the pane every 10 ms until the first
screen is whole (the lesson's title, the footer's keys, the tutor's input: see READY_TEXT);
the time from the tmux call to that capture is one sample. Repeats
``--runs`` times (cold processes; the lesson cache is warm, as it is for a learner after the
first start: the uncounted first round is that start) and prints
median/min/max, then the same for two floors run the same way: ``python -c "import textual"``,
and a bare Textual app (a header, a line of text, a Python editor and a footer) until its
text appears. The machine's speed moves from hour to hour; the floors show where it stands.

    .venv/bin/python benchmarks/bench_startup.py [--runs 7] [--size 100x30] [--lang en]
        [--compare DIR]   (DIR: a copy of another version's tree, e.g. from `git archive`)

Where PYTHONDONTWRITEBYTECODE is set, Python writes no bytecode for a source tree: run
`python -m compileall -q tutor` (and the same in DIR) first to time what a regular install
starts with, or leave it out to time the editable install's compile at each start.
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
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENV_BIN = ROOT / ".venv" / "bin"
READY_TEXT = {
    "en": ("Tensors that track", "f1 Help"),
    "zh": ("会记录历史的张量", "f1 帮助"),
}
"""The first lesson's title (the top bar, the lesson pane) and the footer's last key, on
screen together: the keys used to come ~0.2 s after the text, a first screen not yet
usable from the keyboard."""
CHAT_TEXT = {"en": ("Ask the tutor",), "zh": ("向导师提问",)}
"""On the course's first step (a reading) the tutor's input is on the first screen too: it
used to come ~0.24 s after the rest."""
FLOOR_MARK = "imported-textual"
BARE_APP = """\
from textual.app import App
from textual.widgets import Footer, Header, Static, TextArea


class Bare(App):
    def compose(self):
        yield Header()
        yield Static("bare-app-ready")
        yield TextArea("x = 1\\n", language="python")
        yield Footer()


Bare().run()
"""
"""The floor of a Textual app's first screen on this machine, drawn the way ours is."""
POLL_S = 0.01
FIRST_START_S = 4.0
"""How long the uncounted first start stays open after its screen is up."""
LIMIT_S = 30.0


SOCKET = f"bench-startup-{os.getpid()}"
"""A private tmux server: other tmux sessions on the machine neither see nor disturb ours."""


def tmux(*args: str) -> str:
    done = subprocess.run(
        ["tmux", "-L", SOCKET, *args], capture_output=True, text=True, check=False
    )
    return done.stdout


def time_to_text(session: str, command: str, texts: tuple[str, ...],
                 size: tuple[int, int], linger: float = 0.0) -> float:
    """Seconds from starting ``command`` in a fresh tmux session until all of ``texts`` are
    on screen at once; the session is then left open ``linger`` seconds more."""
    width, height = size
    began = time.perf_counter()
    tmux("new-session", "-d", "-s", session, "-x", str(width), "-y", str(height), command)
    try:
        while time.perf_counter() - began < LIMIT_S:
            screen = tmux("capture-pane", "-p", "-t", session)
            if all(text in screen for text in texts):
                took = time.perf_counter() - began
                time.sleep(linger)
                return took
            time.sleep(POLL_S)
        raise SystemExit(
            f"{' and '.join(map(repr, texts))} did not appear within {LIMIT_S:.0f} s of: "
            f"{command}\n"
            + tmux("capture-pane", "-p", "-t", session)
        )
    finally:
        tmux("kill-session", "-t", session)


def report(name: str, times: list[float]) -> None:
    print(
        f"{name:<22} median {statistics.median(times):.3f} s   "
        f"min {min(times):.3f} s   max {max(times):.3f} s   ({len(times)} runs)"
    )


def main() -> int:
    # One server for the whole run: a session that stays keeps it up, since a server that
    # exits with its last session races the next sample's start ("server exited
    # unexpectedly").
    tmux("new-session", "-d", "-s", "keeper", "sleep 86400")
    try:
        return bench()
    finally:
        tmux("kill-server")


def bench() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--size", default="100x30", help="terminal WIDTHxHEIGHT")
    parser.add_argument("--lang", choices=sorted(READY_TEXT), default="en")
    parser.add_argument("--no-floor", action="store_true",
                        help="skip the floors (import textual, a bare Textual app)")
    parser.add_argument(
        "--at",
        metavar="LESSON/STEP",
        help="resume at this step (e.g. requires-grad/first-backward, a code step: its "
        "editor is on the first screen) instead of the course's first, a reading",
    )
    parser.add_argument(
        "--compare",
        metavar="DIR",
        type=Path,
        help="also time the tutor package in DIR (a copy of another version), in turns",
    )
    args = parser.parse_args()
    width, height = (int(n) for n in args.size.lower().split("x"))
    size = (width, height)
    python = shlex.quote(str(VENV_BIN / "python"))
    with tempfile.TemporaryDirectory() as data_dir:
        if args.at:
            from tutor.progress import ProgressStore

            with ProgressStore.default(Path(data_dir)) as store:
                store.set_position(*args.at.split("/", 1))
        run = f"TUTOR_LANG={args.lang} {python} -m tutor --data-dir {shlex.quote(data_dir)}"
        ready = READY_TEXT[args.lang] + (() if args.at else CHAT_TEXT[args.lang])
        subjects = {"tutor": (f"cd {shlex.quote(str(ROOT))} && {run}", ready)}
        if args.compare:
            where = shlex.quote(str(args.compare.resolve()))
            subjects[f"tutor in {args.compare.name}"] = (
                f"cd {where} && PYTHONPATH={where} {run}",
                ready,
            )
        if not args.no_floor:
            subjects["import textual"] = (
                f"{python} -c \"import textual, time; print('{FLOOR_MARK}'); time.sleep(5)\"",
                (FLOOR_MARK,),
            )
            bare = Path(data_dir) / "bare_app.py"
            bare.write_text(BARE_APP, encoding="utf-8")
            subjects["bare Textual app"] = (f"{python} {shlex.quote(str(bare))}",
                                            ("bare-app-ready", "^p"))
        times: dict[str, list[float]] = {name: [] for name in subjects}
        # In turns, so a machine that gets busier or quieter affects each alike. The first
        # round is not counted: it warms the file cache, and it is a learner's first start,
        # open long enough for tutor to write its caches.
        for round_ in range(args.runs + 1):
            for name, (command, text) in subjects.items():
                took = time_to_text("bench", command, text, size,
                                    linger=0.0 if round_ else FIRST_START_S)
                if round_:
                    times[name].append(took)
    for name, taken in times.items():
        report(f"{name} ({args.lang})" if name.startswith("tutor") else name, taken)
    return 0


if __name__ == "__main__":
    sys.exit(main())

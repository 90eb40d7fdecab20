"""Tutor chat figures on the question sets: top-1/top-3 lesson retrieval, answers with the
expected words, solution requests refused with a hint, off-topic declined, latency.

    .venv/bin/python benchmarks/bench_chat.py [--set PATH ...] [--misses]

Default sets: tests/chat/questions.yaml (written with the engine), tests/chat/heldout.yaml
(written after round 1's engine; round 2 looked at its misses), tests/chat/heldout2.yaml
(written before round 2 changed anything, measured once at its end; round 3 looked at its
misses), tests/chat/heldout3.yaml (written by someone who never read the chat code,
measured once at the end of round 3; round 4 read its misses), tests/chat/heldout4.yaml
(the same, placed at the end of round 4 and measured once; round 5 read its misses) and
tests/chat/heldout5.yaml (the same, placed at the end of round 5 and measured once; round 6
read its misses), tests/chat/heldout6.yaml (the same, placed at the end of round 6 and
measured once; round 7 read its misses) and tests/chat/heldout7.yaml (the same, placed at
the end of round 7 and measured once; skipped if absent). The topic gate
phrasings (tests/chat/topic_gate.yaml, written in round 4 before its thresholds) are reported
as declined/answered counts.

Index figures: built from the sources (what the first start pays), and read back from the
on-disk cache (every later start), both without loading the course, which is timed apart.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tutor.chat import Tutor  # noqa: E402
from tutor.chat.evaluation import OFF_TOPIC, SOLUTION_REQUEST, Report, evaluate, load_cases  # noqa: E402
from tutor.course import load_course  # noqa: E402

DEFAULT_SETS = [
    ROOT / "tests/chat/questions.yaml",
    ROOT / "tests/chat/heldout.yaml",
    ROOT / "tests/chat/heldout2.yaml",
    ROOT / "tests/chat/heldout3.yaml",
    ROOT / "tests/chat/heldout4.yaml",
    ROOT / "tests/chat/heldout5.yaml",
    ROOT / "tests/chat/heldout6.yaml",
    ROOT / "tests/chat/heldout7.yaml",
]
GATE = ROOT / "tests/chat/topic_gate.yaml"


def print_report(name: str, report: Report, *, misses: bool) -> None:
    refused, total = report.refused_with_hint
    off = report.subset(OFF_TOPIC)
    print(f"== {name}: {len(report.results)} questions")
    print(f"  top-1 accuracy              {report.top1:6.1%}")
    print(f"  top-3 accuracy              {report.top3:6.1%}")
    print(f"  answers with expected words {report.words:6.1%}")
    print(f"  solution requests refused   {refused}/{total} with a hint")
    print(f"  off-topic declined          {sum(r.top1 for r in off)}/{len(off)}")
    print(f"  answers leaking a solution  {report.leaks}")
    print(
        f"  latency p50 / p95           {report.latency(0.5):.1f} ms / "
        f"{report.latency(0.95):.1f} ms"
    )
    if misses:
        for r in report.failures():
            got = (
                r.answer.kind
                if r.case.topic in (OFF_TOPIC, SOLUTION_REQUEST)
                else (r.answer.lessons[:3])
            )
            print(f"  miss: [{r.case.topic}] got {got} words={r.words}: {r.case.q}")


def print_gate(tutor: Tutor, path: Path, *, misses: bool) -> None:
    """Off-domain questions declined and autograd questions answered, of the gate phrasings."""
    from ruamel.yaml import YAML

    gate = YAML(typ="safe").load(path.read_text(encoding="utf-8"))
    off = [(q, tutor.ask(q).kind == "off_topic") for q in gate["off"]]
    on = [(q, tutor.ask(q).kind == "answer") for q in gate["on"]]
    print(f"== {path.name}: {len(off) + len(on)} questions")
    print(f"  other domains declined      {sum(ok for _, ok in off)}/{len(off)}")
    print(f"  autograd questions answered {sum(ok for _, ok in on)}/{len(on)}")
    if misses:
        for q, ok in off + on:
            if not ok:
                print(f"  miss: {q}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", type=Path, action="append", help="question set YAML")
    parser.add_argument("--misses", action="store_true", help="list the questions missed")
    args = parser.parse_args()
    start = time.perf_counter()
    course = load_course()
    print(f"course loaded in {(time.perf_counter() - start) * 1000:.0f} ms")
    start = time.perf_counter()
    tutor = Tutor(course, cache_dir=None)
    print(
        f"index built in {(time.perf_counter() - start) * 1000:.0f} ms "
        f"({len(tutor.retriever.passages)} passages)"
    )
    with tempfile.TemporaryDirectory() as cache:
        Tutor(course, cache_dir=Path(cache))  # builds and stores
        times = []
        for _ in range(5):
            start = time.perf_counter()
            Tutor(course, cache_dir=Path(cache))
            times.append((time.perf_counter() - start) * 1000)
    print(f"index from cache in {statistics.median(times):.0f} ms (median of 5)")
    for path in args.set or DEFAULT_SETS:
        if path.exists():
            print_report(path.name, evaluate(tutor, load_cases(path)), misses=args.misses)
    if not args.set and GATE.exists():
        print_gate(tutor, GATE, misses=args.misses)
    return 0


if __name__ == "__main__":
    sys.exit(main())

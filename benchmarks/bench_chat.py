"""Tutor chat figures: question sets in the learner format graded with the written rubric,
the tutor's speed, and the earlier (regression) question sets.

    .venv/bin/python benchmarks/bench_chat.py [--set PATH ...] [--dump FILE] [--show]
        [--misses] [--no-shell] [--legacy]

`--set PATH` grades any file in the learner format (a YAML list of items with id, lang, kind,
q, and optionally topic, must, step; default: tests/chat/learner/dev.yaml and test.yaml, both
training sets now). For each set it prints the counts by grade, by language and by kind, the
solution requests answered with their own step's hint, and the answer latency as `tutor ask`
asks (no step) and as the TUI asks (on a step). `--dump FILE` writes each question, its
answer's text and the automatic grade, for a blind judge. The rubric is in
tests/chat/chat_evaluation.py (good / ok / poor / wrong / leak). It is automatic: the facts
as `must` terms, the shapes by their marks; `--show` prints every answer with its grade.

Then `tutor ask` from the shell (process start included, median of 5 after one warm-up) and
the card count. `--legacy` adds the earlier sets (tests/chat/questions.yaml, heldout*.yaml:
regression sets, read and fixed by earlier rounds) with their top-1/top-3 figures, the topic
gate phrasings (tests/chat/topic_gate.yaml), and the index's build and cache-load times.
"""


from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

sys.path.insert(0, str(ROOT / "tests/chat"))

from chat_evaluation import (  # noqa: E402
    GRADES,
    OFF_TOPIC,
    SOLUTION_REQUEST,
    LearnerItem,
    Report,
    evaluate,
    grade,
    load_cases,
    load_learner,
    percentile,
    read_data,
)

from tutor.chat import ChatContext, Tutor  # noqa: E402
from tutor.chat.cards import load_cards  # noqa: E402
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
    gate = read_data(path)
    off = [(q, tutor.ask(q).kind == "off_topic") for q in gate["off"]]
    on = [(q, tutor.ask(q).kind == "answer") for q in gate["on"]]
    print(f"== {path.name}: {len(off) + len(on)} questions")
    print(f"  other domains declined      {sum(ok for _, ok in off)}/{len(off)}")
    print(f"  autograd questions answered {sum(ok for _, ok in on)}/{len(on)}")
    if misses:
        for q, ok in off + on:
            if not ok:
                print(f"  miss: {q}")


LEARNER = ROOT / "tests/chat/learner"


def _tui_context(course, item: LearnerItem) -> ChatContext | None:  # type: ignore[no-untyped-def]
    """Where a TUI learner asking this would stand: the item's step, else its lesson's first
    exercise (the TUI always asks on a step)."""
    ref = item.step
    if ref is None and item.topic:
        try:
            lesson = course.lesson(item.topic)
        except KeyError:
            return None
        exercise = next((s for s in lesson.steps if getattr(s, "hints", None)), None)
        ref = f"{lesson.id}/{exercise.id}" if exercise else None
    if ref is None:
        return None
    lesson_id, _, step_id = ref.partition("/")
    return ChatContext(lesson_id=lesson_id, step_id=step_id)


def grade_set(course, path: Path, *, show: bool, misses: bool, dump: Path | None) -> None:  # type: ignore[no-untyped-def]
    """The learner-format set at ``path`` graded with the rubric: counts by grade, language
    and kind, solution requests with their step's hint, and the answer latency as `tutor ask`
    (no step) and as the TUI (on a step) ask."""
    from tutor.sandbox import Sandbox

    items = load_learner(path)
    # as `tutor ask` answers: a sandbox runs what a "what does this print?" question pastes
    sandbox = Sandbox(few_runs=True)
    tutor = Tutor(course, runner=sandbox)
    counts: Counter[str] = Counter()
    by_kind: dict[str, Counter[str]] = {}
    by_lang: dict[str, Counter[str]] = {}
    times: list[float] = []
    rows = []
    for item in items:
        start = time.perf_counter()
        answer = tutor.ask(item.q, lang=item.lang)
        times.append((time.perf_counter() - start) * 1000)
        g, why = grade(item, answer, course)
        counts[g] += 1
        by_kind.setdefault(item.kind, Counter())[g] += 1
        by_lang.setdefault(item.lang, Counter())[g] += 1
        rows.append({"id": item.id, "lang": item.lang, "kind": item.kind, "question": item.q,
                     "answer": answer.text, "grade": g, "why": why})
        if show or (misses and g != "good"):
            print(f"--- [{g}: {why}] {item.id} ({item.kind}) {item.source}")
            print(f"Q: {item.q}")
            if show:
                print(answer.text)
    # the TUI asks on a step, with a sandbox of its own for runs (none for the chat)
    tui = Tutor(course)
    tui_times: list[float] = []
    for item in items:
        context = _tui_context(course, item)
        start = time.perf_counter()
        tui.ask(item.q, lang=item.lang, context=context)
        tui_times.append((time.perf_counter() - start) * 1000)
    sandbox.close()
    n = len(items)
    print(f"== {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}: {n} questions")
    for g in GRADES:
        print(f"  {g:6} {counts[g]:4}  {counts[g] / max(n, 1):6.1%}")
    for name, table in (("language", by_lang), ("kind", by_kind)):
        for key, c in sorted(table.items()):
            row = " ".join(f"{g}={c[g]}" for g in GRADES if c[g])
            print(f"  {name} {key:10} {sum(c.values()):3}: {row}")
    sol = by_kind.get("solution", Counter())
    print(f"  solution requests with a hint for the right step: {sol['good'] + sol['ok']}/"
          f"{sum(sol.values())}")
    print(f"  answer latency, no step (tutor ask) p50 / p95: {percentile(times, 0.5):.1f} ms / "
          f"{percentile(times, 0.95):.1f} ms")
    print(f"  answer latency, on a step (TUI)    p50 / p95: {percentile(tui_times, 0.5):.1f} ms"
          f" / {percentile(tui_times, 0.95):.1f} ms")
    if dump is not None:
        _dump(dump, rows)
        print(f"  answers written to {dump}")


def _dump(path: Path, rows: list[dict[str, str]]) -> None:
    """Question, answer and automatic grade of each item: JSON lines for .jsonl, else YAML."""
    if path.suffix == ".jsonl":
        text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    else:
        import yaml

        text = yaml.safe_dump(rows, allow_unicode=True, sort_keys=False, width=100)
    path.write_text(text, encoding="utf-8")


SHELL_QUESTIONS = ("why do I get element 0 of tensors does not require grad",
                   "detach 和 no_grad 有什么区别", "why is x.grad None", "为什么 x.grad 是 None",
                   "what's the weather in Paris tomorrow")
"""A card's question in each language, a symptom in each (answered by its likely causes, not
a card), and another domain's question (declined)."""


def shell_timing(runs: int = 5, base: Path | None = None) -> None:
    """`tutor ask` from the shell, process start included (the median of ``runs``). With
    ``base`` (another checkout), both are timed in turns, side by side: ``python -m tutor``
    with that checkout first on the path, and with this one."""
    import os
    import subprocess

    sides = {"this": str(ROOT), **({"base": str(base)} if base is not None else {})}
    away = tempfile.mkdtemp()  # `-m` puts the working folder first on the path: not a checkout
    for question in SHELL_QUESTIONS:
        times: dict[str, list[float]] = {side: [] for side in sides}
        for n in range(runs + 1):
            for side in (list(sides) if n % 2 else list(sides)[::-1]):
                env = {**os.environ, "PYTHONPATH": sides[side]}
                start = time.perf_counter()
                subprocess.run([sys.executable, "-m", "tutor", "ask", "--offline", question],
                               capture_output=True, check=True, env=env, cwd=away)
                times[side].append(time.perf_counter() - start)
        for side, taken in times.items():
            taken = sorted(taken[1:])  # the first run warms the caches
            print(f"  tutor ask {question[:40]!r:44} {side:4} median "
                  f"{statistics.median(taken):.2f} s, min {taken[0]:.2f} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--set",
        type=Path,
        action="append",
        metavar="PATH",
        help="a question set in the learner format to grade (repeatable; default: the "
        "learner dev and test splits)",
    )
    parser.add_argument(
        "--dump",
        type=Path,
        metavar="FILE",
        help="write each question, answer text and automatic grade to FILE (.jsonl: JSON "
        "lines, else YAML), for a blind judge; with several sets, one file each (FILE's "
        "stem gets the set's name)",
    )
    parser.add_argument("--show", action="store_true", help="print every answer and grade")
    parser.add_argument("--misses", action="store_true", help="list the questions not graded good")
    parser.add_argument("--legacy", action="store_true", help="also the earlier question sets")
    parser.add_argument("--no-shell", action="store_true", help="skip timing tutor ask")
    parser.add_argument("--shell-base", type=Path, metavar="DIR",
                        help="time tutor ask of another checkout too, in turns with this one")
    parser.add_argument("--shell-runs", type=int, default=5, metavar="N",
                        help="runs of each tutor ask timing (default 5)")
    args = parser.parse_args()
    course = load_course()
    sets = args.set or [LEARNER / "dev.yaml", LEARNER / "test.yaml"]
    for path in sets:
        dump = args.dump
        if dump is not None and len(sets) > 1:
            dump = dump.with_name(f"{dump.stem}-{path.stem}{dump.suffix}")
        grade_set(course, path.resolve(), show=args.show, misses=args.misses, dump=dump)
    print(f"  answer cards: {len(load_cards().cards)}")
    if not args.no_shell:
        shell_timing(args.shell_runs, args.shell_base)
    if args.legacy:
        legacy(course, misses=args.misses)
    return 0


def legacy(course, *, misses: bool) -> None:  # type: ignore[no-untyped-def]
    """The earlier regression sets and the topic gate, and the index's build and load time."""
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
    for path in DEFAULT_SETS:
        if path.exists():
            print_report(path.name, evaluate(tutor, load_cases(path)), misses=misses)
    if GATE.exists():
        print_gate(tutor, GATE, misses=misses)


if __name__ == "__main__":
    sys.exit(main())

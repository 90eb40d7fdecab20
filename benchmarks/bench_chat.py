"""Tutor chat figures: the learner question set graded with the rubric, the tutor's speed,
and the earlier (regression) question sets.

    .venv/bin/python benchmarks/bench_chat.py [--split test|dev] [--show] [--legacy] [--misses]

The learner set (tests/chat/learner/{dev,test}.yaml, issue 20) is graded with this rubric,
one grade an answer:

- leak: the answer shows the solution of a step (its reference solution's lines or expected
  values; for a solution request, of the step it asks about).
- wrong: off-topic answered as if it were about autograd; a solution request answered with
  another step's hint; an answer that names none of the facts a correct answer needs (the
  item's `must`) and sends the learner to another lesson than the question's.
- poor: on-topic declined or a canned refusal with no hint; an answer in the other language;
  a correct lesson without the facts a correct answer needs.
- ok: correct (every `must` fact, the question's language) but generic: the lesson or card
  for another part of the course than the question's, an unsure preamble, or the wrong shape
  (a can-I / is-it-safe question not answered yes or no first, a comparison without both
  sides).
- good: answers this question correctly, in its language and shape: off-topic declined, a
  solution request answered with its own step's next hint and a guiding question.

Grading is automatic (the facts as `must` terms, the shapes by their marks); `--show` prints
each answer with its grade for reading. Score the test split once, at the end.

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


LEARNER = ROOT / "tests/chat/learner"
GRADES = ("good", "ok", "poor", "wrong", "leak")
_VERDICTS = ("Yes", "No", "It depends", "是的", "不行", "不安全", "安全", "要看情况", "可以", "不")


def _has(text: str, alternatives: str) -> bool:
    return any(a.lower() in text.lower() for a in alternatives.split("|"))


def _in_lang(text: str, lang: str) -> bool:
    import re

    # code, and the course's titles quoted in “…” (an English title may name 报错), are not prose
    prose = re.sub(r"```.*?```|`[^`]*`|“[^”]*”", "", text, flags=re.DOTALL)
    cjk = len(re.findall(r"[\u4e00-\u9fff]", prose))
    if lang == "zh":
        return cjk >= 8
    return cjk == 0


def grade(item: dict, answer, course) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    """(grade, why) of one answer, by the rubric in the module's docstring."""
    from tutor.chat.guardrails import find_leaks, step_secrets

    text, kind = answer.text, item["kind"]
    if item.get("step"):
        _, step = course.find(item["step"])
        if find_leaks(text, step_secrets(step), question=item["q"]).leaked:
            return "leak", f"shows {item['step']}'s solution"
    if kind == "off_topic":
        return ("good", "declined") if answer.kind == "off_topic" else ("wrong", "answered")
    if kind == "solution":
        if answer.kind != "hint" or answer.hint_level is None:
            return "poor", "no hint"
        if answer.sources != [item["step"]]:
            return "wrong", f"hint for {answer.sources}"
        if "?" not in text and "？" not in text:
            return "ok", "hint without a guiding question"
        return "good", "its step's hint"
    if answer.kind == "off_topic":
        return "poor", "declined"
    must = [m for m in item.get("must", [])]
    facts = all(_has(text, m) for m in must)
    on_lesson = item.get("topic") in (answer.lessons or [])[:2]
    if not _in_lang(text, item["lang"]):
        return "poor", "other language"
    if not facts:
        return ("poor", "facts missing") if on_lesson else ("wrong", "facts missing, other lesson")
    if kind in ("can", "safe") and not text.startswith(_VERDICTS):
        return "ok", "no yes/no first"
    if kind == "compare" and sum(line.startswith("- ") for line in text.splitlines()) < 2:
        return "ok", "one side"
    if text.startswith(("I'm not sure", "我不太确定")) or "not sure" in text[:80]:
        return "ok", "unsure"
    if not on_lesson:
        return "ok", f"lessons {answer.lessons[:2]}"
    return "good", "this question, its language and shape"


def grade_split(course, split: str, *, show: bool) -> None:  # type: ignore[no-untyped-def]
    from collections import Counter

    from ruamel.yaml import YAML

    from tutor.sandbox import Sandbox

    items = YAML(typ="safe").load((LEARNER / f"{split}.yaml").read_text(encoding="utf-8"))
    # as `tutor ask` answers: a sandbox runs what a "what does this print?" question pastes
    sandbox = Sandbox(few_runs=True)
    tutor = Tutor(course, runner=sandbox)
    counts: Counter[str] = Counter()
    by_kind: dict[str, Counter[str]] = {}
    by_lang: dict[str, Counter[str]] = {}
    times = []
    for item in items:
        start = time.perf_counter()
        answer = tutor.ask(item["q"], lang=item["lang"])
        times.append((time.perf_counter() - start) * 1000)
        g, why = grade(item, answer, course)
        counts[g] += 1
        by_kind.setdefault(item["kind"], Counter())[g] += 1
        by_lang.setdefault(item["lang"], Counter())[g] += 1
        if show or (g not in ("good",) and args_misses):
            print(f"--- [{g}: {why}] {item['id']} ({item['kind']}) {item['source']}")
            print(f"Q: {item['q']}")
            if show:
                print(answer.text)
    sandbox.close()
    n = len(items)
    label = "TEST split (frozen, scored once)" if split == "test" else "dev split"
    print(f"== learner questions, {label}: {n} questions")
    for g in GRADES:
        print(f"  {g:6} {counts[g]:4}  {counts[g] / n:6.1%}")
    for name, table in (("kind", by_kind), ("language", by_lang)):
        for key, c in sorted(table.items()):
            row = " ".join(f"{g}={c[g]}" for g in GRADES if c[g])
            print(f"  {name} {key:10} {sum(c.values()):3}: {row}")
    sol = by_kind.get("solution", Counter())
    print(f"  solution requests with a hint for the right step: {sol['good'] + sol['ok']}/"
          f"{sum(sol.values())}")
    times.sort()
    print(f"  answer latency p50 / p95: {times[n // 2]:.1f} ms / {times[int(n * 0.95)]:.1f} ms")


def shell_timing(runs: int = 5) -> None:
    """`tutor ask` from the shell, process start included (the median of ``runs``)."""
    import subprocess

    exe = Path(sys.executable).with_name("tutor")
    for question in ("why do I get element 0 of tensors does not require grad",
                     "detach 和 no_grad 有什么区别", "why is x.grad None"):
        times = []
        for _ in range(runs + 1):
            start = time.perf_counter()
            subprocess.run([str(exe), "ask", "--offline", question], capture_output=True,
                           check=True)
            times.append(time.perf_counter() - start)
        times = sorted(times[1:])  # the first run warms the caches
        print(f"  tutor ask {question[:40]!r:44} median {statistics.median(times):.2f} s, "
              f"min {times[0]:.2f} s")


args_misses = False


def main() -> int:
    global args_misses
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("test", "dev"), default="test")
    parser.add_argument("--show", action="store_true", help="print every answer and grade")
    parser.add_argument("--legacy", action="store_true", help="also the earlier question sets")
    parser.add_argument("--no-shell", action="store_true", help="skip timing tutor ask")
    parser.add_argument("--set", type=Path, action="append", help="question set YAML")
    parser.add_argument("--misses", action="store_true", help="list the questions missed")
    args = parser.parse_args()
    args_misses = args.misses
    course = load_course()
    grade_split(course, args.split, show=args.show)
    if not args.no_shell:
        shell_timing()
    if not (args.legacy or args.set):
        return 0
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

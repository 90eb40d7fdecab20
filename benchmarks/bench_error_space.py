"""How the diagnosis does on torch's own error space and on silent-bug classes from public
checklists: programs written for this (tests/diagnosis/error_space/*.yaml, corpus2's format
plus a ``class``: the message class, or the checklist's silent-bug class), judged with
bench_diagnosis's rubric, and a table of message class x outcome.

    python benchmarks/bench_error_space.py [--split errors] [--split silent] [--show]
        [--dump FILE]

The programs are the team's own, written from torch's messages and from the checklists, not
rebuilt from learners' questions: a measure of coverage and of never being wrong-specific on
them, not of accuracy on learners' programs (that is bench_diagnosis.py on a frozen corpus).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_diagnosis import (  # noqa: E402
    VERDICTS,
    dump_record,
    judge,
    load_now,
    load_split,
    percentile,
)

from tutor.sandbox import Sandbox  # noqa: E402

CORPUS = ROOT / "tests" / "diagnosis" / "error_space"
SPLITS = ("errors", "silent")
SHORT = {"right": "right", "family only": "family", "generic": "generic",
         "wrong-specific": "WRONG", "none": "none", "unjudged": "unjudged"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--split", action="append", choices=SPLITS)
    parser.add_argument("--show", action="store_true", help="one line per program")
    parser.add_argument("--only", help="only programs whose id contains this")
    parser.add_argument("--dump", type=Path, help="one JSON object a line per program "
                        "(bench_diagnosis.py's --dump)")
    args = parser.parse_args(argv)
    from tutor.diagnosis.reasoning import diagnose

    print(f"({load_now()} at the start)")
    by_class: dict[str, Counter[str]] = defaultdict(Counter)
    latency: list[float] = []
    out = args.dump.open("w", encoding="utf-8") if args.dump is not None else None
    with Sandbox() as sandbox, out if out is not None else contextlib.nullcontext():
        sandbox.run("pass")
        for split in args.split or SPLITS:
            for item in load_split(split, CORPUS):
                if args.only and args.only not in item["id"]:
                    continue
                code = item["code"]
                result = sandbox.run(code)
                started = time.perf_counter()
                found = diagnose(code, result, sandbox)
                latency.append(time.perf_counter() - started)
                first = found[0] if found else None
                verdict = judge(item, first)
                by_class[f"{split}: {item['class']}"][verdict] += 1
                if out is not None:
                    out.write(json.dumps(dump_record(item, result, first, latency[-1]),
                                         ensure_ascii=False) + "\n")
                if args.show:
                    got = "nothing" if first is None else (
                        f"{first.id} line {first.root_line or first.line} "
                        f"verified={first.fix_verified}")
                    error = result.error
                    said = f"{error.type}: {error.message.splitlines()[0][:60]}" if error else "ok"
                    print(f"  {SHORT[verdict]:8} {item['id']:34} want {item['family']} "
                          f"{item['root_lines']}; got {got}; {1000 * latency[-1]:.0f} ms; "
                          f"{said}")
    width = max((len(name) for name in by_class), default=10)
    shown = [*VERDICTS, "unjudged"]
    print(f"{'message class':{width}}  " + " ".join(f"{SHORT[v]:>7}" for v in shown))
    total: Counter[str] = Counter()
    for name in sorted(by_class):
        counts = by_class[name]
        total += counts
        print(f"{name:{width}}  " + " ".join(f"{counts[v]:7}" for v in shown))
    n = sum(total.values())
    print(f"{'all':{width}}  " + " ".join(f"{total[v]:7}" for v in shown) + f"   ({n})")
    if latency:
        print(f"diagnosis latency (re-run + checks + fix trials): p50 "
              f"{1000 * percentile(latency, 0.5):.0f} / p95 {1000 * percentile(latency, 0.95):.0f}"
              f" ms over {len(latency)} programs ({load_now()} at the end)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

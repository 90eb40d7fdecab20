"""Whether the diagnosis depends on how a program is written: metamorphic variants of every
training program whose diagnosis is right now, each diagnosed again.

    python benchmarks/bench_robustness.py [--set NAME ...] [--transform NAME ...] [--show]
        [--dump FILE]

The programs: the items of ``tests/diagnosis/corpus4/test.yaml``, ``corpus3/test.yaml`` and
``corpus2/{dev,test}.yaml`` whose first diagnosis the rubric of ``bench_diagnosis.py`` judges
right (family, a root-cause line, a verified fix), and the ``.py`` programs of
``tests/diagnosis/corpus``, ``heldout`` and ``heldout2`` whose first diagnosis is the one
their ``# expect:`` header names (its root-cause line is then the one to keep). Each is
diagnosed as the TUI and ``tutor run`` do (the run in the sandbox, then
``tutor.diagnosis.reasoning.diagnose``: the instrumented re-run, the checks, the fix trials).

Each program's variants (``tests/diagnosis/metamorphic.py``: renamed, in ``main()``, the loop
in a function, the model in a class, lines added before, a tensor made by a helper) run in
the sandbox; a variant that does not reproduce (another exception type, other printed
numbers) is dropped. For each variant kept: the same diagnosis (the same id, or one of the
same family; for a program that must get none or the generic one: that again), the
root-cause line where the original's went, and the fix still verified where it was.

Printed: per transform and per diagnosis id, variants made / kept / same diagnosis / same
root line / fix still verified / all three; by kind (exception, silent). ``--show`` prints
each variant that broke; ``--dump FILE`` writes them (the variant's code, what it got) one
JSON object a line.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_diagnosis import EXPECT, FAMILIES, SETS, classify, judge, load_split  # noqa: E402

from tests.diagnosis.metamorphic import TRANSFORMS, Variant, reproduces, variants  # noqa: E402
from tutor.diagnosis.models import Diagnosis  # noqa: E402
from tutor.diagnosis.reasoning import diagnose  # noqa: E402
from tutor.sandbox import Sandbox  # noqa: E402
from tutor.sandbox.models import RunResult  # noqa: E402

DIAGNOSIS = ROOT / "tests" / "diagnosis"
CORPORA = {"corpus4": (DIAGNOSIS / "corpus4", "test"), "corpus3": (DIAGNOSIS / "corpus3", "test"),
           "corpus2-dev": (DIAGNOSIS / "corpus2", "dev"),
           "corpus2-test": (DIAGNOSIS / "corpus2", "test")}
ALL_SETS = (*CORPORA, *SETS)
COLUMNS = ("made", "kept", "same", "line", "fix", "all")


@dataclass
class Program:
    """A training program whose diagnosis is right, and what a variant must keep."""

    name: str
    code: str
    result: RunResult
    first: Diagnosis | None
    roots: list[int]
    accepts: Any  # (Diagnosis | None) -> bool: the same diagnosis

    @property
    def kind(self) -> str:
        return "exception" if self.result.error is not None else "silent"

    @property
    def label(self) -> str:
        if self.first is None:
            return "(none)"
        return "(generic)" if self.first.generic else self.first.id


@dataclass
class Tally:
    counts: dict[str, Counter[str]] = field(default_factory=dict)

    def add(self, key: str, column: str) -> None:
        self.counts.setdefault(key, Counter())[column] += 1

    def print(self, title: str) -> None:
        print(f"  {title:26} " + " ".join(f"{c:>5}" for c in COLUMNS) + "   all/kept")
        for key in sorted(self.counts):
            row = self.counts[key]
            share = f"{100 * row['all'] / row['kept']:5.0f}%" if row["kept"] else "     -"
            print(f"  {key:26} " + " ".join(f"{row[c]:5}" for c in COLUMNS) + f"   {share}")


def first_of(code: str, result: RunResult, sandbox: Sandbox) -> Diagnosis | None:
    found = diagnose(code, result, sandbox)
    return found[0] if found else None


def yaml_programs(sandbox: Sandbox, name: str) -> Iterator[Program]:
    folder, split = CORPORA[name]
    for item in load_split(split, folder):
        code = item["code"]
        result = sandbox.run(code)
        first = first_of(code, result, sandbox)
        if judge(item, first) != "right":
            continue
        family = FAMILIES[item["family"]]
        yield Program(f"{name}/{item['id']}", code, result, first,
                      list(item.get("root_lines", [])),
                      lambda d, family=family: d is not None and not d.generic
                      and d.id in family)


def file_programs(sandbox: Sandbox, name: str) -> Iterator[Program]:
    for path in sorted(SETS[name].glob("*.py")):
        code = path.read_text(encoding="utf-8")
        found = EXPECT.search(code)
        if found is None:
            continue
        expected = found.group(1)
        result = sandbox.run(code)
        first = first_of(code, result, sandbox)
        got = [] if first is None else [(first.id, first.generic)]
        if classify(expected, got) != "right":
            continue
        roots = [] if first is None else [first.root_line or first.line or 0]
        yield Program(f"{name}/{path.stem}", code, result, first, [r for r in roots if r],
                      lambda d, expected=expected: classify(
                          expected, [] if d is None else [(d.id, d.generic)]) == "right")


def programs(sandbox: Sandbox, sets: list[str]) -> Iterator[Program]:
    for name in sets:
        yield from (yaml_programs if name in CORPORA else file_programs)(sandbox, name)


def judge_variant(program: Program, variant: Variant, got: Diagnosis | None
                  ) -> dict[str, bool]:
    same = bool(program.accepts(got))
    if program.first is None or not program.roots:
        line = same
    else:
        line = got is not None and (got.root_line or got.line) in variant.mapped(program.roots)
    fix = not (program.first is not None and program.first.fix_verified) or (
        got is not None and got.fix_verified is True)
    return {"same": same, "line": line, "fix": fix, "all": same and line and fix}


def failing_lines(result: RunResult) -> list[int]:
    error = result.error
    if error is None:
        return []
    lines = [f.line for f in error.traceback if f.line]
    return lines or ([error.line] if error.line else [])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--set", action="append", choices=ALL_SETS,
                        help="score only this set (repeatable)")
    parser.add_argument("--transform", action="append", choices=TRANSFORMS)
    parser.add_argument("--show", action="store_true", help="each variant that broke")
    parser.add_argument("--dump", type=Path, help=(
        "the variants that broke, and those that did not reproduce, as JSON lines"))
    args = parser.parse_args(argv)
    sets = args.set or list(ALL_SETS)
    transforms = set(args.transform or TRANSFORMS)
    by_transform: dict[str, Tally] = {"exception": Tally(), "silent": Tally()}
    by_id = Tally()
    originals: Counter[str] = Counter()
    out = args.dump.open("w", encoding="utf-8") if args.dump else None
    one, five, _ = os.getloadavg()
    print(f"(load {one:.1f}, 5 min {five:.1f}, on {os.cpu_count()} cores at the start)")
    try:
        with Sandbox() as sandbox:
            for program in programs(sandbox, sets):
                originals[program.kind] += 1
                made = [v for v in variants(program.code, program.roots,
                                            failing_lines(program.result))
                        if v.transform in transforms]
                for variant in made:
                    tally = by_transform[program.kind]
                    tally.add(variant.transform, "made")
                    by_id.add(program.label, "made")
                    run = sandbox.run(variant.code)
                    if not reproduces(program.result, run, variant):
                        if out is not None:
                            error = run.error
                            out.write(json.dumps({
                                "program": program.name, "transform": variant.transform,
                                "broke": ["reproduce"], "outcome": run.outcome,
                                "error": None if error is None else
                                f"{error.type}: {error.message} (line {error.line})",
                                "stdout": run.stdout[-400:], "code": variant.code},
                                ensure_ascii=False) + "\n")
                        continue
                    got = first_of(variant.code, run, sandbox)
                    verdict = judge_variant(program, variant, got)
                    for column in ("kept", *(k for k, v in verdict.items() if v)):
                        tally.add(variant.transform, column)
                        by_id.add(program.label, column)
                    if verdict["all"]:
                        continue
                    record = {
                        "program": program.name, "transform": variant.transform,
                        "want": program.label, "roots": sorted(variant.mapped(program.roots)),
                        "got": None if got is None else got.id,
                        "got_line": None if got is None else (got.root_line or got.line),
                        "verified": None if got is None else got.fix_verified,
                        "broke": [k for k, v in verdict.items() if not v and k != "all"]}
                    if args.show:
                        print(f"  broke {record['broke']}: {program.name} [{variant.transform}]"
                              f" want {record['want']} at {record['roots']}; got "
                              f"{record['got']} at {record['got_line']} "
                              f"verified={record['verified']}", flush=True)
                    if out is not None:
                        out.write(json.dumps({**record, "code": variant.code},
                                             ensure_ascii=False) + "\n")
    finally:
        if out is not None:
            out.close()
    print(f"programs whose diagnosis is right: exception {originals['exception']}, silent "
          f"{originals['silent']} (sets: {', '.join(sets)})")
    print("columns: variants made; kept (they reproduce); the same diagnosis; its root-cause "
          "line where the original's went; the fix still verified; all three")
    for kind, tally in by_transform.items():
        if tally.counts:
            tally.print(f"{kind}, by transform")
            total = Counter[str]()
            for row in tally.counts.values():
                total += row
            kept = total["kept"]
            print(f"  {'(all)':26} " + " ".join(f"{total[c]:5}" for c in COLUMNS)
                  + (f"   {100 * total['all'] / kept:5.0f}%" if kept else ""))
    by_id.print("by diagnosis id")
    one, five, _ = os.getloadavg()
    print(f"(load {one:.1f}, 5 min {five:.1f} at the end)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

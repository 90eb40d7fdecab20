"""This checkout's diagnoses against another checkout's, on the same programs, in turns: does
any diagnosis change (item by item: every diagnosis given, its title, root line, fix, what
the fix's trial showed, the chain, the alternatives, the patch), and how long each takes
(p50 / p95 by set and by kind, with the load).

    python benchmarks/ab_diagnosis.py --base DIR [--set corpus5:test ...] [--dump DIR]

DIR is a checkout of the commit before the change (``git worktree add /tmp/before COMMIT``).
Each side runs in a worker process of its own, with its own sandbox; every program is run
by both, one after the other, the side that goes first alternating, so that the machine's
load falls on both alike. The default sets are the dev and scored test sets of the diagnosis
(never a frozen split): corpus2 dev and test, corpus3, corpus4, corpus5, shapes_dev,
silent_dev and error_space. ``--dump DIR`` keeps each side's records (bench_diagnosis's
``--dump`` record, plus every diagnosis given and the latency) as ``DIR/SIDE.jsonl``.
Latency is the wall time of ``diagnose`` after the learner's run, as bench_diagnosis's.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SETS = ["corpus2:dev", "corpus2:test", "corpus3:test", "corpus4:test", "corpus5:test",
        "shapes_dev:dev", "silent_dev:dev", "error_space:errors", "error_space:silent"]
WORKER = """
import json, sys, time
from pathlib import Path
sys.path.insert(0, str(Path.cwd() / "benchmarks"))
from bench_diagnosis import dump_record, load_split
from tutor.diagnosis.reasoning import diagnose
from tutor.sandbox import Sandbox
items = {}
with Sandbox() as sandbox:
    sandbox.run("pass")
    # an optimizer's first use loads torch's compiler stack: once, before any program
    sandbox.run("import torch\\nm = torch.nn.Linear(2, 1)\\no = torch.optim.Adam(m.parameters())\\n"
                "m(torch.ones(1, 2)).sum().backward()\\no.step()\\n", instrument=True)
    print("ready", flush=True)
    for line in sys.stdin:
        folder, split, name = json.loads(line)
        if (folder, split) not in items:
            items[folder, split] = {i["id"]: i for i in load_split(split, Path(folder))}
        item = items[folder, split][name]
        result = sandbox.run(item["code"])
        started = time.perf_counter()
        found = diagnose(item["code"], result, sandbox)
        record = dump_record(item, result, found[0] if found else None,
                             time.perf_counter() - started)
        record["all"] = [[d.id, d.title.en, d.root_line, d.fix.en, d.fix_verified,
                          d.fix_check.en if d.fix_check else None] for d in found]
        print(json.dumps(record, ensure_ascii=False), flush=True)
"""


class Side:
    def __init__(self, checkout: Path) -> None:
        env = dict(os.environ, PYTHONPATH=str(checkout))
        self.proc = subprocess.Popen([sys.executable, "-c", WORKER], cwd=checkout, env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        if self.proc.stdout.readline().strip() != "ready":
            raise SystemExit(f"the sandbox of {checkout} did not start")

    def diagnose(self, folder: Path, split: str, name: str) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps([str(folder), split, name]) + "\n")
        self.proc.stdin.flush()
        return dict(json.loads(self.proc.stdout.readline()))

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=60)


def shown(record: dict[str, Any]) -> object:
    """Everything of a record's diagnoses a learner reads (not its latency)."""
    return record["diagnosis"], record["all"]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load {one:.1f} (5 min {five:.1f}) on {os.cpu_count()} cores"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--base", type=Path, required=True, help="the checkout to compare with")
    parser.add_argument("--set", action="append", metavar="NAME:SPLIT",
                        help="a folder of tests/diagnosis and its split (repeatable)")
    parser.add_argument("--dump", type=Path, help="keep each side's records here")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from bench_diagnosis import load_split

    jobs = []
    for spec in args.set or SETS:
        name, split = spec.split(":")
        folder = ROOT / "tests" / "diagnosis" / name
        jobs += [(spec, folder, split, item) for item in load_split(split, folder)]
    print(f"({load()} at the start; {len(jobs)} programs)")
    sides = {"base": Side(args.base.resolve()), "this": Side(ROOT)}
    records: dict[str, list[dict[str, Any]]] = {"base": [], "this": []}
    try:
        for index, (spec, folder, split, item) in enumerate(jobs):
            for side in (["base", "this"] if index % 2 == 0 else ["this", "base"]):
                record = sides[side].diagnose(folder, split, item["id"])
                records[side].append({**record, "set": spec})
    finally:
        for worker in sides.values():
            worker.close()
    print(f"({load()} at the end)")
    if args.dump is not None:
        args.dump.mkdir(parents=True, exist_ok=True)
        for side, kept in records.items():
            with (args.dump / f"{side}.jsonl").open("w", encoding="utf-8") as out:
                out.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in kept)
    changed = [(a, b) for a, b in zip(records["base"], records["this"], strict=True)
               if shown(a) != shown(b)]
    print(f"diagnoses changed: {len(changed)} of {len(jobs)} programs")
    for a, b in changed:
        print(f"  {a['set']} {a['id']}:\n    base {shown(a)}\n    this {shown(b)}")
    groups: dict[tuple[str, str], list[int]] = defaultdict(list)
    for at, record in enumerate(records["base"]):
        kind = str(record.get("kind") or "exception")
        for group in ((record["set"], kind), (record["set"], "all"), ("all", kind),
                      ("all", "all")):
            groups[group].append(at)
    print(f"  {'set':20} {'kind':9} {'n':>3}  base p50 / p95   this p50 / p95  (ms)")
    for (spec, kind), ats in sorted(groups.items()):
        cells = []
        for side in ("base", "this"):
            ms = [records[side][at]["latency_ms"] for at in ats]
            cells.append(f"{percentile(ms, 0.5):6.0f} / {percentile(ms, 0.95):5.0f}")
        print(f"  {spec:20} {kind:9} {len(ats):3}  {cells[0]}   {cells[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

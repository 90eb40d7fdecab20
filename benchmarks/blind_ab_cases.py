"""Blind A/B cases for a judge: each item of a frozen set with two systems' outputs under
labels shuffled per item, and the key (which label is which system) in a file of its own.

    python benchmarks/blind_ab_cases.py diag tests/diagnosis/corpus4/test.yaml \
        base.jsonl new.jsonl OUT_DIR
    python benchmarks/blind_ab_cases.py chat tests/chat/learner3/test.yaml \
        base.jsonl new.jsonl OUT_DIR

The dumps are ``bench_diagnosis.py --dump`` / ``bench_chat.py --dump`` of each system on the
same set. Writes ``OUT_DIR/KIND_cases.json`` (what the judge reads) and
``OUT_DIR/KIND_key.json`` (what the judge must not read). Once judged:

    python benchmarks/blind_ab_cases.py --tally OUT_DIR/KIND_key.json VERDICTS.jsonl...

prints each system's verdicts (and text defects), all and by the item's kind.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

DIAG_REFERENCE = ("id", "source", "kind", "scope", "family", "family_note", "root_lines", "fix",
                  "symptom", "observed")
CHAT_REFERENCE = ("id", "lang", "kind", "q", "topic", "step", "must", "answer_note", "snippet",
                  "expected")


def _rows(path: Path) -> dict[str, dict[str, Any]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]
    return {row["id"]: row for row in rows}


def _shown(kind: str, row: dict[str, Any] | None) -> dict[str, Any] | None:
    if row is None:
        return None
    if kind == "diag":
        return {"error": row.get("error"), "diagnosis": row.get("diagnosis")}
    return {"answer": row.get("answer")}


def tally(key_path: Path, verdict_paths: list[Path], cases_path: Path) -> None:
    key = json.loads(key_path.read_text(encoding="utf-8"))
    kinds = {c["id"]: c["reference"]["kind"]
             for c in json.loads(cases_path.read_text(encoding="utf-8"))}
    rows = [json.loads(line) for path in verdict_paths
            for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    for system in ("base", "new"):
        total: Counter[str] = Counter()
        by_kind: dict[str, Counter[str]] = {}
        defects = 0
        for row in rows:
            label = "A" if key[row["id"]]["A"] == system else "B"
            verdict = row[label]["verdict"]
            total[verdict] += 1
            by_kind.setdefault(kinds[row["id"]], Counter())[verdict] += 1
            defects += bool(row[label].get("text_defect"))
        print(f"{system}: {len(rows)} judged: {dict(total.most_common())}; "
              f"text defects {defects}")
        for kind, counts in sorted(by_kind.items()):
            print(f"    {kind}: {dict(counts.most_common())}")


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--tally":
        key_path = Path(sys.argv[2])
        cases = key_path.with_name(key_path.name.replace("_key", "_cases"))
        tally(key_path, [Path(p) for p in sys.argv[3:]], cases)
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kind", choices=["diag", "chat"])
    parser.add_argument("reference", type=Path, help="the frozen set's YAML")
    parser.add_argument("base", type=Path, help="the first system's dump")
    parser.add_argument("new", type=Path, help="the second system's dump")
    parser.add_argument("out", type=Path)
    parser.add_argument("--seed", type=int, default=20261203)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    data = yaml.safe_load(args.reference.read_text(encoding="utf-8"))
    items = data["items"] if isinstance(data, dict) else data
    outputs = {"base": _rows(args.base), "new": _rows(args.new)}
    cases, key = [], {}
    for item in items:
        sides = ["base", "new"]
        rng.shuffle(sides)
        key[item["id"]] = {"A": sides[0], "B": sides[1]}
        fields = DIAG_REFERENCE if args.kind == "diag" else CHAT_REFERENCE
        case: dict[str, Any] = {"id": item["id"],
                                "reference": {k: item.get(k) for k in fields}}
        if args.kind == "diag":
            case["code"] = "\n".join(f"{n:3} | {line}" for n, line in
                                     enumerate(item["code"].splitlines(), 1))
        for label, side in zip("AB", sides, strict=True):
            case[label] = _shown(args.kind, outputs[side].get(item["id"]))
        cases.append(case)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{args.kind}_cases.json").write_text(
        json.dumps(cases, ensure_ascii=False, indent=1), encoding="utf-8")
    (args.out / f"{args.kind}_key.json").write_text(json.dumps(key, indent=1), encoding="utf-8")
    print(f"{len(cases)} cases")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

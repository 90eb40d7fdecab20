"""How often the diagnosis is right, on the corpus and on a held-out set.

    python benchmarks/bench_diagnosis.py [--only corpus|heldout] [--show-misses]

Each program in ``tests/diagnosis/corpus`` and ``tests/diagnosis/heldout`` names the
diagnosis it must get in a ``# expect: ID`` header (``none``: no diagnosis at all;
``generic``: the honest generic one). Every program runs in the real sandbox and is
counted as:

- right:          the first diagnosis is the expected one
- wrong-specific: a specific diagnosis that is not the expected one (the bad case)
- generic:        the generic diagnosis where a specific one was expected
- missed:         no diagnosis where one was expected

The held-out set was written after the rules and never used to tune them: its figure is the
one that says how well the rules generalise.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tutor.diagnosis import explain  # noqa: E402
from tutor.sandbox import Sandbox  # noqa: E402

SETS = {
    "corpus": ROOT / "tests" / "diagnosis" / "corpus",
    "heldout": ROOT / "tests" / "diagnosis" / "heldout",
    # Written by someone who never read the rules or the other programs, only the catalog's ids.
    "heldout2": ROOT / "tests" / "diagnosis" / "heldout2",
}
EXPECT = re.compile(r"^# expect: ([a-z0-9-]+)\s*$", re.MULTILINE)


def classify(expected: str, got: list[tuple[str, bool]]) -> str:
    """One of right / wrong-specific / generic / missed for a program's diagnoses."""
    if expected == "none":
        return "right" if not got else ("generic" if got[0][1] else "wrong-specific")
    if not got:
        return "missed"
    first_id, first_generic = got[0]
    if expected == "generic":
        return "right" if first_generic else "wrong-specific"
    if first_generic:
        return "generic"
    return "right" if first_id == expected else "wrong-specific"


def score(sandbox: Sandbox, folder: Path, show_misses: bool) -> Counter[str]:
    counts: Counter[str] = Counter()
    for path in sorted(folder.glob("*.py")):
        code = path.read_text(encoding="utf-8")
        found = EXPECT.search(code)
        if found is None:
            print(f"  {path.name}: no '# expect:' header, skipped")
            continue
        expected = found.group(1)
        result = sandbox.run(code)
        got = [(d.id, d.generic) for d in explain(result, code)]
        verdict = classify(expected, got)
        counts[verdict] += 1
        if show_misses and verdict != "right":
            shown = ", ".join(i for i, _ in got) or "nothing"
            print(f"  {verdict:14} {path.name}: expected {expected}, got {shown}")
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=sorted(SETS))
    parser.add_argument("--show-misses", action="store_true")
    args = parser.parse_args(argv)
    with Sandbox() as sandbox:
        for name, folder in SETS.items():
            if args.only and name != args.only:
                continue
            counts = score(sandbox, folder, args.show_misses)
            total = sum(counts.values())
            if not total:
                print(f"{name}: no programs")
                continue
            right = counts["right"]
            print(
                f"{name:8} {total:3} programs: right {right} ({100 * right / total:.1f}%), "
                f"wrong-specific {counts['wrong-specific']}, generic {counts['generic']}, "
                f"missed {counts['missed']}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())

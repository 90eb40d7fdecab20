"""How often the diagnosis is right: on corpus2 (learner programs rebuilt from real public
questions, split dev/test) and on the older sets the team wrote (regression sets).

    python benchmarks/bench_diagnosis.py --split dev|test [--show]   # corpus2, by the rubric
    python benchmarks/bench_diagnosis.py [--only corpus|heldout] [--show-misses]

corpus2 (tests/diagnosis/corpus2, rubric in its README): every program runs in the real
sandbox, then ``tutor.diagnosis.reasoning.diagnose`` (instrumented re-run, checks, fixes
tried in the sandbox) answers; the first diagnosis is judged right (family, root-cause line
and a verified fix), family only, generic, wrong-specific or none, separately for exceptions
and silent bugs, next to the plain traceback on the same programs. It also prints the p50/p95
of the diagnosis latency (evidence re-run and fix check included) and the p50 cost a run
that does not fail pays (an uninstrumented run, which is what a normal run is).

The older sets:

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


CORPUS2 = ROOT / "tests" / "diagnosis" / "corpus2"
# The catalog ids that name each root-cause family of corpus2 (the rubric's "right family").
FAMILIES: dict[str, set[str]] = {
    "softmax-before-ce": {"softmax-before-ce"},
    "zero-grad-missing": {"missing-zero-grad"},
    "zero-grad-misplaced": {"zero-grad-misplaced"},
    "backward-not-called": {"backward-not-called"},
    "step-not-called": {"step-not-called"},
    "dropout-no-eval": {"dropout-no-eval"},
    "batchnorm-no-eval": {"batchnorm-single-sample", "dropout-no-eval"},
    "requires-grad-after-use": {"requires-grad-after-use", "requires-grad-too-late"},
    "optimizer-wrong-params": {"optimizer-wrong-params"},
    "lr-too-high": {"lr-too-high"},
    "mse-broadcast": {"loss-target-broadcast", "loss-target-size"},
    "graph-cut-silent": {"graph-cut-silent", "data-attribute"},
    "double-sigmoid": {"double-sigmoid"},
    "frozen-params": {"frozen-params"},
    "relu-output": {"relu-output"},
    "backward-twice": {"backward-twice", "backward-twice-loop"},
    "lost-graph": {"no-grad-fn", "no-grad-fn-no-grad-block", "no-grad-fn-no-leaf",
                   "no-grad-fn-detached", "no-grad-fn-python-number", "no-grad-fn-frozen",
                   "no-grad-fn-integer", "backward-in-no-grad"},
    "inplace-saved": {"inplace-modified-output", "inplace-modified-input"},
    "leaf-inplace": {"leaf-inplace", "leaf-inplace-update", "leaf-view-inplace"},
    "non-scalar-backward": {"non-scalar-backward"},
    "numpy-requires-grad": {"numpy-requires-grad"},
    "linear-shape": {"linear-in-features", "mm-shape-mismatch", "matvec-shape-mismatch"},
    "view-shape": {"view-invalid-shape"},
    "conv-channels": {"conv-channels", "conv-input-rank"},
    "dtype-mismatch": {"dtype-mismatch", "dtype-long-float", "dtype-double-float",
                       "dtype-float-double-layer", "dtype-double-float-operands"},
    "ce-target-dtype": {"ce-target-dtype", "ce-target-float-shape", "ce-target-shape"},
    "ce-target-range": {"ce-target-out-of-bounds"},
    "batch-size-mismatch": {"ce-batch-mismatch"},
    "bool-ambiguous": {"bool-ambiguous"},
    "grad-none": {"grad-none-nonleaf", "grad-none", "grad-is-none", "nonleaf-grad-read",
                  "nonleaf-grad-warning"},
    "nonleaf-requires-grad": {"nonleaf-requires-grad"},
    "int-requires-grad": {"int-requires-grad"},
}
VERDICTS = ("right", "family only", "generic", "wrong-specific", "none")


def judge(item: dict, first: object | None) -> str:  # type: ignore[type-arg]
    """The rubric of corpus2/README.md, applied to a system's first diagnosis."""
    if first is None:
        return "none"
    if getattr(first, "generic", False):
        return "generic"
    if first.id not in FAMILIES[item["family"]]:  # type: ignore[attr-defined]
        return "wrong-specific"
    line = first.root_line or first.line  # type: ignore[attr-defined]
    if line in item["root_lines"] and first.fix_verified:  # type: ignore[attr-defined]
        return "right"
    return "family only"


def baseline(item: dict, result: object) -> str:  # type: ignore[type-arg]
    """The plain traceback: an exception's message and failing line, nothing for a silent
    bug."""
    return "generic" if getattr(result, "error", None) is not None else "none"


def load_split(split: str) -> list[dict]:  # type: ignore[type-arg]
    from ruamel.yaml import YAML

    with (CORPUS2 / f"{split}.yaml").open(encoding="utf-8") as handle:
        return list(YAML(typ="safe").load(handle)["items"])


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def score_corpus2(sandbox: Sandbox, split: str, show: bool) -> None:
    import time

    from tutor.diagnosis.reasoning import diagnose

    items = load_split(split)
    table: dict[str, Counter[str]] = {"exception": Counter(), "silent": Counter()}
    base: dict[str, Counter[str]] = {"exception": Counter(), "silent": Counter()}
    trace_line_right = Counter()  # type: Counter[str]
    latency: list[float] = []
    plain: list[float] = []
    for item in items:
        code = item["code"]
        started = time.perf_counter()
        result = sandbox.run(code)
        plain.append(time.perf_counter() - started)
        started = time.perf_counter()
        found = diagnose(code, result, sandbox)
        latency.append(time.perf_counter() - started)
        first = found[0] if found else None
        verdict = judge(item, first)
        table[item["kind"]][verdict] += 1
        base[item["kind"]][baseline(item, result)] += 1
        if result.error is not None and result.error.line in item["root_lines"]:
            trace_line_right[item["kind"]] += 1
        if show:
            got = "nothing" if first is None else (
                f"{first.id} line {first.root_line or first.line} "
                f"verified={first.fix_verified}")
            print(f"  {verdict:14} {item['id']:42} want {item['family']} "
                  f"{item['root_lines']}; got {got}")
    print(f"corpus2 {split}: {len(items)} programs (judged by the rubric in "
          "tests/diagnosis/corpus2/README.md)")
    for kind in ("exception", "silent"):
        counts = table[kind]
        total = sum(counts.values())
        if not total:
            continue
        cells = ", ".join(f"{v} {counts[v]} ({100 * counts[v] / total:.0f}%)" for v in VERDICTS)
        print(f"  {kind:9} {total:3}: {cells}")
        bcells = ", ".join(f"{v} {base[kind][v]}" for v in VERDICTS if base[kind][v])
        print(f"    baseline (plain traceback): {bcells}; its line is a root-cause line in "
              f"{trace_line_right[kind]}")
    allc = table["exception"] + table["silent"]
    total = sum(allc.values())
    print(f"  all       {total:3}: right {allc['right']} ({100 * allc['right'] / total:.0f}%), "
          f"wrong-specific {allc['wrong-specific']} "
          f"({100 * allc['wrong-specific'] / total:.1f}%)")
    print(f"  diagnosis latency (re-run + checks + fix trials): p50 "
          f"{1000 * percentile(latency, 0.5):.0f} ms, "
          f"p95 {1000 * percentile(latency, 0.95):.0f} ms")
    print(f"  a plain run of the same programs (what a run that does not fail pays): p50 "
          f"{1000 * percentile(plain, 0.5):.0f} ms")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=sorted(SETS))
    parser.add_argument("--split", choices=("dev", "test"),
                        help="score corpus2's split (score test once, at the end)")
    parser.add_argument("--show", action="store_true", help="corpus2: one line per program")
    parser.add_argument("--show-misses", action="store_true")
    args = parser.parse_args(argv)
    if args.split:
        with Sandbox() as sandbox:
            score_corpus2(sandbox, args.split, args.show)
        return 0
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

"""Re-run every corpus3 program and record (or check) what it really did.

    .venv/bin/python tests/diagnosis/corpus3/record.py --check   # compare with test.yaml
    .venv/bin/python tests/diagnosis/corpus3/record.py --write   # fill `observed` in test.yaml
    .venv/bin/python tests/diagnosis/corpus3/record.py --check --seed 1   # another seed

Each program runs in a child forked from one worker process that imported torch once (the
way the tutor's sandbox runs code), seeded, with its own stdout. The worker is a fresh
interpreter, so nothing of this script's state reaches the programs. The file format is the
`Item` model below; `tests/diagnosis/test_corpus3_format.py` checks it and the reproduction.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import signal
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, HttpUrl, model_validator

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "test.yaml"
LEARNER_FILE = "<learner>"
MESSAGE_CHARS = 300
WARNING_CHARS = 200
STDOUT_LINES = 6
RUN_TIMEOUT_S = 60

# Root-cause families named in corpus2; an item whose family is not one of these must say in
# `family_note` what the root cause is.
CORPUS2_FAMILIES = frozenset({
    "lost-graph", "leaf-inplace", "backward-twice", "inplace-saved", "non-scalar-backward",
    "optimizer-wrong-params", "mse-broadcast", "lr-too-high", "grad-none", "dtype-mismatch",
    "zero-grad-missing", "numpy-requires-grad", "linear-shape", "graph-cut-silent",
    "bool-ambiguous", "requires-grad-after-use", "dropout-no-eval", "softmax-before-ce",
    "backward-not-called", "zero-grad-misplaced", "step-not-called", "int-requires-grad",
    "relu-output", "frozen-params", "double-sigmoid", "ce-target-range", "ce-target-dtype",
    "batch-size-mismatch", "view-shape", "nonleaf-requires-grad", "conv-channels",
    "batchnorm-no-eval",
})


class Observed(BaseModel):
    """What one run of the program did on this torch (CPU), as recorded by this script."""

    model_config = ConfigDict(extra="forbid")

    outcome: Literal["ok", "error"]
    type: str | None = None
    message: str | None = None
    line: int | None = None
    warnings: list[str] = Field(default_factory=list)
    stdout_tail: str = ""
    torch: str

    @model_validator(mode="after")
    def _error_has_details(self) -> Observed:
        if self.outcome == "error" and not (self.type and self.line):
            raise ValueError("an error outcome needs the exception type and the failing line")
        if self.outcome == "ok" and (self.type or self.message or self.line):
            raise ValueError("an ok outcome has no exception type, message or line")
        return self


class Item(BaseModel):
    """One learner program rebuilt from a public question, with its root cause and fix."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$")
    source: HttpUrl
    kind: Literal["exception", "silent"]
    scope: Literal["module", "function", "class"]
    family: str = Field(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$")
    family_note: str | None = None
    root_lines: list[int] = Field(min_length=1)
    fix: str = Field(min_length=10)
    symptom: str | None = None
    observed: Observed | None = None
    code: str

    @model_validator(mode="after")
    def _consistent(self) -> Item:
        lines = self.code.splitlines()
        for number in self.root_lines:
            if not 1 <= number <= len(lines) or not lines[number - 1].strip():
                raise ValueError(f"root line {number} is not a code line of {self.id}")
        if self.family not in CORPUS2_FAMILIES and not self.family_note:
            raise ValueError(f"new family {self.family!r} needs a family_note")
        if (self.kind == "silent") != bool(self.symptom):
            raise ValueError("a silent item needs a symptom, an exception item has none")
        if self.observed is not None:
            expected = "ok" if self.kind == "silent" else "error"
            if self.observed.outcome != expected:
                raise ValueError(f"{self.kind} item observed {self.observed.outcome}")
        return self


def load_items(path: Path = CORPUS) -> list[Item]:
    """The items of a corpus file, validated."""
    from ruamel.yaml import YAML

    data = YAML(typ="safe").load(path.read_text(encoding="utf-8"))
    return [Item.model_validate(raw) for raw in data["items"]]


# --- the worker: one interpreter with torch imported, one forked child per program ---------

def _run_in_child(code: str, seed: int, out_path: str) -> dict[str, Any]:
    """Runs in the forked child: execute the learner code, return what happened."""
    import random
    import warnings

    import torch

    # One intra-op thread: the programs are tiny, and on a shared machine more threads only
    # contend; float results then also do not depend on how many cores the machine has.
    torch.set_num_threads(1)
    random.seed(seed)
    torch.manual_seed(seed)
    try:
        import numpy

        numpy.random.seed(seed)
    except ImportError:
        pass
    result: dict[str, Any] = {"outcome": "ok", "torch": torch.__version__}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            exec(compile(code, LEARNER_FILE, "exec"), {"__name__": "__main__"})
        except BaseException as error:  # the program's error is the record, whatever it is
            frames = [f for f in traceback.extract_tb(error.__traceback__)
                      if f.filename == LEARNER_FILE]
            result.update(
                outcome="error",
                type=type(error).__name__,
                message=" ".join(str(error).split())[:MESSAGE_CHARS],
                line=frames[-1].lineno if frames else None,
            )
    seen: list[str] = []
    for warning in caught or []:
        text = " ".join(f"{warning.category.__name__}: {warning.message}".split())
        text = text[:WARNING_CHARS]
        if text not in seen:
            seen.append(text)
    result["warnings"] = seen
    sys.stdout.flush()
    with open(out_path, encoding="utf-8", errors="replace") as out:
        tail = out.read().splitlines()[-STDOUT_LINES:]
    result["stdout_tail"] = "".join(line + "\n" for line in tail)
    return result


def _fork_run(code: str, seed: int) -> dict[str, Any]:
    sys.stdout.flush()
    with tempfile.NamedTemporaryFile("w+", suffix=".out") as out, \
            tempfile.NamedTemporaryFile("w+", suffix=".json") as answer:
        pid = os.fork()
        if pid == 0:  # child
            status = 0
            try:
                os.dup2(out.fileno(), 1)
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, 2)
                signal.alarm(RUN_TIMEOUT_S)
                result = _run_in_child(code, seed, out.name)
                Path(answer.name).write_text(json.dumps(result), encoding="utf-8")
            except BaseException:
                status = 1
            finally:
                os._exit(status)
        _, status = os.waitpid(pid, 0)
        text = Path(answer.name).read_text(encoding="utf-8")
        if status != 0 or not text:
            return {"outcome": "crashed", "status": status}
        parsed: dict[str, Any] = json.loads(text)
        return parsed


def _warm_up() -> None:
    """Pay torch's lazy first-use imports (autograd, optimizers) once, before the forks.
    Single-threaded, so no thread pool exists when the worker forks."""
    import torch

    torch.set_num_threads(1)
    model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.ReLU())
    for optimizer in (torch.optim.SGD(model.parameters(), lr=0.1),
                      torch.optim.Adam(model.parameters())):
        optimizer.zero_grad()
        model(torch.ones(1, 2)).sum().backward()
        optimizer.step()


def _worker(seed: int) -> None:
    """Read {id: code} from stdin, write {id: result} to stdout."""
    _warm_up()
    programs: dict[str, str] = json.load(sys.stdin)
    results = {item_id: _fork_run(code, seed) for item_id, code in programs.items()}
    sys.stdout.write(json.dumps(results))


def run_programs(programs: dict[str, str], seed: int = 0) -> dict[str, dict[str, Any]]:
    """Run each program (id -> code) in a fresh child; returns id -> observed dict."""
    done = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--worker", "--seed", str(seed)],
        input=json.dumps(programs), capture_output=True, text=True, check=True,
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )
    results: dict[str, dict[str, Any]] = json.loads(done.stdout)
    return results


# --- comparing a run with the record --------------------------------------------------------

_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|nan|inf")


def same_text(recorded: str, now: str, rel: float = 1e-3, abs_: float = 1e-4) -> bool:
    """Equal up to small differences in the numbers printed (float reductions can differ
    in the last digits between machines); all other text must match exactly."""
    if _NUMBER.sub("#", recorded) != _NUMBER.sub("#", now):
        return False
    pairs = [(float(a), float(b))
             for a, b in zip(_NUMBER.findall(recorded), _NUMBER.findall(now), strict=True)]
    # In a run that diverged, the values on the way up already carry the amplified rounding
    # of the CPU (594888.662 on one machine, 604428.289 on another, a step before 3e7).
    floor = DIVERGING if any(exploded(x, y) for x, y in pairs) else EXPLODED
    for x, y in pairs:
        if math.isnan(x) and math.isnan(y):
            continue
        if exploded(x, y, floor):
            continue
        if not math.isclose(x, y, rel_tol=rel, abs_tol=abs_) and not drifted(x, y):
            return False
    return True


DRIFT = 1.5
"""A value a few training steps compute (a running mean after the steps, a trained model's
sensitivity) rounds differently on another CPU (AVX2 against AVX-512 kernels) and the
difference grows with each step: 0.5810 on one machine, 0.5830 on another; 0.3772 and
0.3012. The record keeps its sign and its size within this factor; the words around it, the
outcome, the exception and its line are compared exactly."""


DRIFTS_BELOW = 10.0
"""Only values of this size drift so (a mean, a share, a change): a loss of 1.5e5 against
1.6e5 is another run, and one on its way to diverging compares by :func:`exploded`."""


def drifted(x: float, y: float) -> bool:
    """Both finite, nonzero, of one sign, below :data:`DRIFTS_BELOW`, and within
    :data:`DRIFT` of each other."""
    if not (math.isfinite(x) and math.isfinite(y)) or x == 0 or y == 0 or (x > 0) != (y > 0):
        return False
    if max(abs(x), abs(y)) >= DRIFTS_BELOW:
        return False
    return max(abs(x), abs(y)) <= DRIFT * min(abs(x), abs(y))


EXPLODED = 1e6
"""Above this a printed value is a diverging run's: rounding differences between CPUs grow
with every step, so only its order of magnitude is the record."""


DIVERGING = 1e4
"""In an output that reaches :data:`EXPLODED`, values above this are on the diverging path."""


def exploded(x: float, y: float, floor: float = EXPLODED) -> bool:
    """Both values diverged (at least ``floor``), with the same sign, to within one decade of
    each other."""
    if not (abs(x) >= floor and abs(y) >= floor and (x > 0) == (y > 0)):
        return False
    if math.isinf(x) or math.isinf(y):
        return x == y
    return abs(math.log10(abs(x)) - math.log10(abs(y))) <= 1.0


def differences(item: Item, now: dict[str, Any]) -> list[str]:
    """How a run differs from the item's record: outcome, type and line must be equal, the
    printed output equal up to rounding."""
    recorded = item.observed
    if recorded is None:
        return ["no observed record"]
    found = []
    for key in ("outcome", "type", "line"):
        if getattr(recorded, key) != now.get(key):
            found.append(f"{key}: recorded {getattr(recorded, key)!r}, now {now.get(key)!r}")
    if not same_text(recorded.stdout_tail, now.get("stdout_tail", "")):
        found.append(f"stdout: recorded {recorded.stdout_tail!r}, now {now.get('stdout_tail')!r}")
    return found


# --- writing the file -----------------------------------------------------------------------

def write_observed(path: Path, results: dict[str, dict[str, Any]]) -> None:
    """Fill each item's `observed` in place, keeping the file's layout and comments."""
    from ruamel.yaml import YAML
    from ruamel.yaml.scalarstring import LiteralScalarString

    yaml = YAML()
    yaml.width = 4096  # no folding: long lines stay whole (and no trailing blanks)
    yaml.indent(mapping=2, sequence=2, offset=0)
    data = yaml.load(path.read_text(encoding="utf-8"))
    for raw in data["items"]:
        observed = Observed.model_validate(results[raw["id"]]).model_dump(exclude_none=True)
        if not observed["warnings"]:
            del observed["warnings"]
        if observed["stdout_tail"]:
            observed["stdout_tail"] = LiteralScalarString(observed["stdout_tail"])
        else:
            del observed["stdout_tail"]
        code = raw.pop("code")
        raw["observed"] = observed
        raw["code"] = code
    with path.open("w", encoding="utf-8") as out:
        yaml.dump(data, out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--check", action="store_true", help="compare runs with the record")
    action.add_argument("--write", action="store_true", help="record the runs in the file")
    action.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--file", type=Path, default=CORPUS)
    parser.add_argument("--only", nargs="*", default=None, help="item ids to run")
    args = parser.parse_args(argv)
    if args.worker:
        _worker(args.seed)
        return 0
    from ruamel.yaml import YAML

    raw_items = YAML(typ="safe").load(args.file.read_text(encoding="utf-8"))["items"]
    chosen = [raw for raw in raw_items if args.only is None or raw["id"] in args.only]
    results = run_programs({raw["id"]: raw["code"] for raw in chosen}, seed=args.seed)
    crashed = [item_id for item_id, result in results.items() if result["outcome"] == "crashed"]
    if crashed:
        print("crashed (no record possible):", ", ".join(crashed), file=sys.stderr)
        return 1
    if args.write:
        if args.only is not None:
            print("--write records the whole file; drop --only", file=sys.stderr)
            return 2
        invalid = []
        for raw in chosen:
            try:
                Item.model_validate({**raw, "observed": results[raw["id"]]})
            except ValueError as error:
                invalid.append(f"{raw['id']}: {error}")
        if invalid:
            print("not recorded, items do not match their runs:", *invalid, sep="\n",
                  file=sys.stderr)
            return 1
        write_observed(args.file, results)
        print(f"recorded {len(results)} programs in {args.file}")
        return 0
    failures = 0
    for raw in chosen:
        item = Item.model_validate(raw)
        found = differences(item, results[item.id])
        if found:
            failures += 1
            print(f"{item.id}: " + "; ".join(found))
    print(f"{len(chosen) - failures}/{len(chosen)} programs reproduce their record")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

"""Sharded grading throughput: N ``tutor grade --shard K/N`` processes sharing the cores.

Writes a class of S students with one submission each (the seed's non-scalar exercise, in
correct and wrong styles), then for each N grades it as N concurrent shard processes (each
``--jobs J``), merges the parts, and prints submissions per second of wall time, against one
process (N = 1), and checks the merged report has every submission. Each process pays its own
start-up (Python, the torch server, the truth), so small classes understate the gain.
Figures only: nothing here asserts a time.

    python benchmarks/bench_shards.py [--students 200] [--shards 1 2 4] [--jobs 1]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LESSON = {
    "id": "seed",
    "title": {"en": "Non-scalar backward", "zh": "非标量 backward"},
    "steps": [{
        "id": "nonscalar", "kind": "code",
        "title": {"en": "Fill x.grad", "zh": "填充 x.grad"},
        "prompt": {"en": "z = x + 2 is not a scalar: fill x.grad.",
                   "zh": "z = x + 2 不是标量：请填充 x.grad。"},
        "solution": "import torch\n\nx = torch.ones(2, requires_grad=True)\nz = x + 2\n"
                    "z.sum().backward()\n",
        "checks": [{"kind": "no_error"}, {"kind": "value", "expr": "x.grad", "points": 2}],
    }],
}
STYLES = [
    "import torch\nx = torch.ones(2, requires_grad=True)\nz = x + 2\nz.sum().backward()\n",
    "import torch\nx = torch.ones(2, requires_grad=True)\nz = x + 2\n"
    "z.backward(torch.ones_like(z))\n",
    "import torch\nx = torch.ones(2, requires_grad=True)\nz = x * 2\nz.sum().backward()\n",
    "import torch\nx = torch.ones(2, requires_grad=True)\nz = x + 2\nz.backward()\n",
]


def tutor(*args: str) -> list[str]:
    return [sys.executable, "-m", "tutor", *args]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=200)
    parser.add_argument("--shards", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--jobs", type=int, default=1, help="--jobs of each shard process")
    args = parser.parse_args()
    env = dict(os.environ, PYTHONPATH=str(ROOT), TUTOR_LANG="en")
    with tempfile.TemporaryDirectory() as tmp:
        here = Path(tmp)
        (here / "lessons").mkdir()
        (here / "lessons" / "90-seed.yaml").write_text(json.dumps(LESSON), encoding="utf-8")
        for i in range(args.students):
            folder = here / "subs" / f"s{i:04d}"
            folder.mkdir(parents=True)
            # a distinct file each (a comment), as real classes are
            code = STYLES[i % len(STYLES)] + f"# {i}\n"
            (folder / "nonscalar.py").write_text(code, encoding="utf-8")
        common = ["--lessons", str(here / "lessons"), "--jobs", str(args.jobs), "--timeout", "5"]
        # the truth once, so no measured run pays for the reference solution
        subprocess.run(tutor("grade", "--exercise", "seed/nonscalar", str(folder / "nonscalar.py"),
                             "--lessons", str(here / "lessons")), env=env, check=True,
                       capture_output=True)
        base = None
        print(f"{args.students} submissions, --jobs {args.jobs} per process, "
              f"{os.cpu_count()} cores")
        for count in args.shards:
            parts = [here / f"p{count}-{k}.json" for k in range(1, count + 1)]
            started = time.perf_counter()
            procs = [subprocess.Popen(
                tutor("grade", str(here / "subs"), *common, "--shard", f"{k}/{count}",
                      "--json", str(part)), env=env, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL) for k, part in enumerate(parts, 1)]
            codes = [p.wait() for p in procs]
            wall = time.perf_counter() - started
            assert codes == [0] * count, codes
            merged = here / f"m{count}.json"
            subprocess.run(tutor("grade", "merge", *map(str, parts), "--json", str(merged)),
                           env=env, check=True, capture_output=True)
            graded = json.loads(merged.read_text(encoding="utf-8"))["summary"]["submissions"]
            rate = graded / wall
            base = base or rate
            print(f"  {count} shard process(es): {wall:6.2f} s wall, {rate:6.1f} submissions/s "
                  f"({rate / base:.2f}x one process); merged report: {graded} submissions")


if __name__ == "__main__":
    main()

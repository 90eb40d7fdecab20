"""Batch grading throughput against the naive way, on the seed's non-scalar exercise.

Grades 500 distinct submissions (correct in several styles, wrong value, wrong shape,
crashing) with ``--jobs 2`` against one warm sandbox, the way ``tutor grade`` does, and
prints submissions per second. Then the naive way on a small sample: one ``python`` process
per submission that imports torch, runs the code and prints ``x.grad`` for a parent to
compare. Prints both rates and their ratio. Targets on a 2-core machine: >= 80
submissions/s and >= 50x naive. Figures only: nothing here asserts a time.

Confinement (issue 18): with ``--confinement both`` (the default) the batch is graded with the
kernel confinement on and off in alternating rounds, side by side; the naive ratio is taken
against the confined rate.

Shards (issue 24): ``--shards N [N...]`` grades the same class folder with ``tutor grade``
processes instead, side by side in turns: one process with ``--jobs J``, one with ``--jobs
N*J`` (as many runs in flight as the shards), and N ``--shard K/N`` processes at once with
``--jobs J`` each, merged; each process pays its own start-up (Python, the torch server),
measured apart and printed, so the class must be large enough for it not to matter.

    python benchmarks/bench_grade.py [--submissions 500] [--jobs 2] [--naive 5]
        [--confinement both|on] [--compare DIR [--rounds 3]]
    python benchmarks/bench_grade.py --shards 2 [4] --jobs 1 [--submissions 1500]
        [--rounds 3]
    (DIR: a copy of another version's tree, e.g. from `git archive`; graded in turns)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

# Which tree's ``tutor`` to grade with: ``--compare`` sets it for the other version.
sys.path.insert(0, os.environ.get("BENCH_TUTOR_TREE") or str(Path(__file__).resolve().parents[1]))

from tutor.course.models import Lesson
from tutor.grading.batch import Submission, grade_submissions
from tutor.sandbox import Sandbox

ROOT = Path(__file__).resolve().parents[1]
TREE_ENV = "BENCH_TUTOR_TREE"

SOLUTION = """\
import torch

x = torch.ones(2, requires_grad=True)
z = x + 2
z.sum().backward()
"""

LESSON = Lesson.model_validate({
    "id": "seed",
    "title": {"en": "Non-scalar backward", "zh": "非标量 backward"},
    "steps": [{
        "id": "nonscalar",
        "kind": "code",
        "title": {"en": "Fill x.grad", "zh": "填充 x.grad"},
        "prompt": {"en": "z = x + 2 is not a scalar: fill x.grad.",
                   "zh": "z = x + 2 不是标量：请填充 x.grad。"},
        "solution": SOLUTION,
        "checks": [
            {"kind": "no_error"},
            {"kind": "value", "expr": "x.grad", "points": 2},
            {"kind": "attribute", "expr": "x.grad", "attribute": "shape"},
            {"kind": "ast", "rule": "grad_from_backward"},
        ],
    }],
})

STYLES = {
    "sum": SOLUTION,
    "torch_sum": "import torch\nx = torch.ones(2, requires_grad=True)\n"
    "torch.sum(x + 2).backward()\n",
    "gradient_arg": "import torch\nx = torch.ones(2, requires_grad=True)\nz = x + 2\n"
    "z.backward(torch.ones_like(z))\n",
    "wrong_value": "import torch\nx = torch.ones(2, requires_grad=True)\nz = x + 2\n"
    "z.mean().backward()\n",
    "wrong_shape": "import torch\nx = torch.ones(1, 2, requires_grad=True)\nz = x + 2\n"
    "z.sum().backward()\n",
    "crash": "import torch\nx = torch.ones(2, requires_grad=True)\nz = x + 2\nz.backward()\n",
}

NAIVE_DRIVER = """\
import json, sys
import torch
namespace = {}
try:
    exec(compile(open(sys.argv[1]).read(), sys.argv[1], "exec"), namespace)
    grad = namespace["x"].grad
    print(json.dumps(None if grad is None else grad.tolist()))
except Exception as exc:
    print(json.dumps({"error": type(exc).__name__}))
"""


def submissions(count: int) -> list[Submission]:
    step = LESSON.steps[0]
    assert step.kind == "code"
    names = sorted(STYLES)
    out = []
    for i in range(count):
        style = names[i % len(names)]
        code = f"# student {i:04d}\n" + STYLES[style]
        out.append(Submission(
            student=f"s{i:04d}", lesson=LESSON, step=step, path=Path(f"s{i:04d}.py"),
            file=f"s{i:04d}/nonscalar.py", code=code, sha256=f"{i:064x}",
        ))
    return out


def sandbox_cpu_s(sandbox: Sandbox) -> float:
    """CPU seconds of the sandbox server and of the runs it reaped."""
    if hasattr(sandbox, "server_usage"):
        usage = sandbox.server_usage()
        if usage is None:
            raise SystemExit("the sandbox server's usage cannot be read (no /proc?)")
        return usage.cpu_s + usage.runs_cpu_s
    # --compare with a version from before server_usage: one server process, runs its children
    server = sandbox._server
    if server is None:
        raise SystemExit("the sandbox has no server")
    with open(f"/proc/{server.proc.pid}/stat", "rb") as handle:
        fields = handle.read().rsplit(b")", 1)[1].split()
    return sum(int(field) for field in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def naive(sample: list[Submission]) -> float:
    """Seconds per submission, one fresh ``python`` that imports torch for each."""
    with tempfile.TemporaryDirectory() as tmp:
        driver = Path(tmp) / "driver.py"
        driver.write_text(NAIVE_DRIVER, encoding="utf-8")
        started = time.perf_counter()
        for submission in sample:
            path = Path(tmp) / "submission.py"
            path.write_text(submission.code, encoding="utf-8")
            done = subprocess.run([sys.executable, str(driver), str(path)], capture_output=True,
                                  text=True, timeout=120, check=False)
            json.loads(done.stdout.strip().splitlines()[-1])
        return (time.perf_counter() - started) / len(sample)


def grade_once(batch: list[Submission], jobs: int, device: str, confine: bool) -> float:
    """Grade ``batch`` in a fresh sandbox, print what it took, return submissions/s."""
    from tutor.grading.expected import ExpectedCache

    with Sandbox(confine=confine) as sandbox:
        sandbox.start()
        sandbox.run("pass")  # wait for the warm server: `tutor grade` starts it once
        mode = sandbox.confinement().mode
        own0, sandbox0 = time.process_time(), sandbox_cpu_s(sandbox)
        started = time.perf_counter()
        entries = grade_submissions(batch, runner=sandbox, jobs=jobs, device=device,
                                    cache=ExpectedCache(disk=False))
        elapsed = time.perf_counter() - started
        time.sleep(0.2)  # let the server reap the last runs
        own_ms = (time.process_time() - own0) * 1000 / len(entries)
        sandbox_ms = (sandbox_cpu_s(sandbox) - sandbox0) * 1000 / len(entries)
    rate = len(entries) / elapsed
    statuses = Counter(entry.status for entry in entries)
    print(f"confinement {'on' if confine else 'off'} ({mode}): graded {len(entries)} "
          f"submissions with --jobs {jobs} in {elapsed:.2f} s "
          f"({dict(sorted(statuses.items()))}); {load()}")
    print(f"warm sandbox : {rate:8.1f} submissions/s  ({1000 * elapsed / len(entries):.1f} ms "
          "each, truth included)")
    # The machine is shared and its speed varies: CPU per submission is the steadier figure
    # (2 cores / 80 per second = 25 ms).
    print(f"CPU          : {own_ms + sandbox_ms:8.1f} ms a submission  (grader {own_ms:.1f}, "
          f"sandbox server and runs {sandbox_ms:.1f})")
    return rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--submissions", type=int, default=500)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--naive", type=int, default=5, help="sample size for the naive way")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--compare", metavar="DIR", type=Path,
                        help="also grade with the tutor package in DIR, in turns")
    parser.add_argument("--rounds", type=int, default=3, help="turns of each, with --compare")
    parser.add_argument("--confinement", choices=["both", "on"], default="both",
                        help="both: grade with it on and off in turns, side by side")
    parser.add_argument("--shards", type=int, nargs="+", metavar="N",
                        help="grade with N `tutor grade --shard K/N` processes against one")
    args = parser.parse_args()
    if args.compare:
        compare(args)
        return
    if args.shards:
        shards(args)
        return

    batch = submissions(args.submissions)
    modes = (True, False) if args.confinement == "both" else (True,)
    rates: dict[bool, list[float]] = {on: [] for on in modes}
    for _ in range(2 if len(modes) > 1 else 1):
        for on in modes:
            rates[on].append(grade_once(batch, args.jobs, args.device, on))
    rate = max(rates[True])
    if len(modes) > 1:
        off = max(rates[False])
        print(f"confinement side by side (2 rounds in turns, best of each): on {rate:.1f}, "
              f"off {off:.1f} submissions/s (on / off x{rate / off:.2f})")
    if args.naive < 1:
        return
    per_naive = naive(batch[: args.naive])
    naive_rate = 1.0 / per_naive
    print(f"naive python : {naive_rate:8.2f} submissions/s  ({per_naive * 1000:.0f} ms each, "
          f"sample of {args.naive})")
    print(f"ratio        : {rate / naive_rate:8.1f}x   (targets: >= 80 submissions/s, >= 50x)")


def compare(args: argparse.Namespace) -> None:
    """This tree and DIR in turns, so a machine that gets busier or quieter affects both."""
    rates: dict[str, list[float]] = {"this tree": [], str(args.compare): []}
    for round_ in range(1, args.rounds + 1):
        for name, tree in (("this tree", ROOT), (str(args.compare), args.compare.resolve())):
            done = subprocess.run(
                [sys.executable, __file__, "--naive", "0", "--confinement", "on", "--submissions",
                 str(args.submissions), "--jobs", str(args.jobs), "--device", args.device],
                env={**os.environ, TREE_ENV: str(tree)}, capture_output=True, text=True,
                check=True,
            )
            lines = [line for line in done.stdout.splitlines()
                     if line.startswith(("warm sandbox", "CPU"))]
            rates[name].append(float(lines[0].split()[3]))
            print(f"round {round_} {name}: " + " | ".join(" ".join(line.split())
                                                           for line in lines), flush=True)
    for name, values in rates.items():
        print(f"{name}: median {sorted(values)[len(values) // 2]:.1f} submissions/s "
              f"over {len(values)} rounds")


def shards(args: argparse.Namespace) -> None:
    """The class as a folder, graded by ``tutor grade`` processes; see the module doc."""
    import resource

    env = dict(os.environ, PYTHONPATH=str(ROOT), TUTOR_LANG="en")
    with tempfile.TemporaryDirectory() as tmp:
        here = Path(tmp)
        env["TUTOR_CACHE_DIR"] = str(here / "cache")  # the truth once, shared by every process
        lessons = here / "lessons"
        lessons.mkdir()
        (lessons / "90-seed.yaml").write_text(
            json.dumps(LESSON.model_dump(mode="json", exclude_none=True)), encoding="utf-8")
        batch = submissions(args.submissions)
        for folder, part in (("class", batch), ("half", batch[: len(batch) // 2])):
            for submission in part:
                path = here / folder / submission.file
                path.parent.mkdir(parents=True)
                path.write_text(submission.code, encoding="utf-8")
        (here / "one" / "s0000").mkdir(parents=True)
        (here / "one" / "s0000" / "nonscalar.py").write_text(SOLUTION, encoding="utf-8")
        common = ["--lessons", str(lessons), "--timeout", "10", "--device", args.device]

        def grade(folder: Path, count: int, jobs: int, tag: str) -> tuple[float, float, int]:
            """Wall seconds, CPU seconds of every process, submissions in the report."""
            parts = [here / f"{tag}-{k}.json" for k in range(1, count + 1)]
            shard = (lambda k: ["--shard", f"{k}/{count}"]) if count > 1 else (lambda k: [])
            cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            started = time.perf_counter()
            procs = [subprocess.Popen(
                [sys.executable, "-m", "tutor", "grade", str(folder), *common, "--jobs",
                 str(jobs), *shard(k), "--json", str(part)], env=env,
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                for k, part in enumerate(parts, 1)]
            said = [p.communicate()[1].decode() for p in procs]
            failed = [text for p, text in zip(procs, said, strict=True) if p.returncode]
            wall = time.perf_counter() - started
            cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            if failed:
                raise SystemExit("tutor grade failed:\n" + failed[0])
            report = parts[0]
            if count > 1:
                report = here / f"{tag}-merged.json"
                subprocess.run([sys.executable, "-m", "tutor", "grade", "merge", *map(str, parts),
                                "--json", str(report)], env=env, check=True, capture_output=True)
            graded = json.loads(report.read_text(encoding="utf-8"))["summary"]["submissions"]
            cpu = (cpu1.ru_utime + cpu1.ru_stime) - (cpu0.ru_utime + cpu0.ru_stime)
            return wall, cpu, graded

        grade(here / "one", 1, 1, "truth")  # the reference solution's values, cached
        startup, _, _ = grade(here / "one", 1, 1, "startup")
        print(f"{args.submissions} submissions, {os.cpu_count()} cores; one process's start-up "
              f"and a lone submission: {startup:.2f} s; {load()}")
        configs = [(1, args.jobs)]
        for count in args.shards:
            configs += [(1, count * args.jobs), (count, args.jobs)]
        configs = list(dict.fromkeys(configs))
        # The class and its first half, each config in turn: the difference of their walls is
        # the second half's time with every process's start-up cancelled out.
        best: dict[tuple[int, int], tuple[float, float]] = {}
        for round_ in range(1, args.rounds + 1):
            for count, jobs in configs:
                tag = f"r{round_}-{count}x{jobs}"
                half_wall, _, half = grade(here / "half", count, jobs, f"{tag}-half")
                wall, cpu, graded = grade(here / "class", count, jobs, tag)
                rate, marginal = graded / wall, (graded - half) / max(wall - half_wall, 1e-9)
                before = best.get((count, jobs), (0.0, 0.0))
                best[(count, jobs)] = (max(before[0], rate), max(before[1], marginal))
                print(f"round {round_}: {count} process(es) x --jobs {jobs}: {graded} in "
                      f"{wall:6.2f} s ({rate:6.1f}/s with start-up), {half} in {half_wall:6.2f} s;"
                      f" without start-up {marginal:6.1f}/s; {1000 * cpu / graded:5.1f} ms CPU "
                      f"each; {load()}", flush=True)
        one, one_marginal = best[(1, args.jobs)]
        print(f"best of {args.rounds} round(s), submissions/s (with start-up | without), "
              f"against one process with --jobs {args.jobs}:")
        for (count, jobs), (rate, marginal) in best.items():
            print(f"  {count} process(es) x --jobs {jobs}: {rate:6.1f} (x{rate / one:.2f}) | "
                  f"{marginal:6.1f} (x{marginal / one_marginal:.2f})")


def load() -> str:
    return "load average " + " ".join(f"{value:.2f}" for value in os.getloadavg())


if __name__ == "__main__":
    main()

"""Warm sandbox runs against cold ``python file.py`` runs, on the seed post's snippets.

Prints p50/p95 latency of warm runs (each a fresh process forked from the warm server),
200 back to back and 200 at a learner's pace (100 ms apart, so the standby is ready), the
same for cold runs (a new interpreter importing torch each time), their ratio, and the
server's resident memory (its manager and its fork template together). Targets on a 2-core
machine: warm p50 <= 10 ms, >= 100x faster than cold, server RSS <= 500 MB. Figures only:
nothing here asserts a time.

The last line sets the paced figures against those targets. Paced is how the issue measured
its own figures ("a standby process forked before the request arrives, so the fork is off
the critical path, about 5 ms"), and how a learner runs code. Back to back, each run also
waits for the CPU that the previous run's exit and the next standby's fork and preparation
take on the other core: that is throughput, which ``bench_grade.py`` measures against its
own target.

The machine is shared, so wall time alone says little: the load average is printed, CPU
time per run is counted (parent + server + the run's process, exit included), so are the
server's page faults per run (a count: it does not move with the machine's speed), and a traced
pass breaks a run into phases (request → standby ready → code start → code end → probes →
result frame → parent validated → process reaped) with the CPU each phase used.

Confinement (issue 18) is measured side by side: ``--confinement both`` (the default)
first times warm runs with the kernel confinement on and off in alternating rounds, in the
same run, and prints both with their ratio; the rest of the report is with it on.

    python benchmarks/bench_runs.py [--runs 200] [--paced-runs 200] [--traced-runs 100]
        [--cold-runs 5] [--confinement both|on]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tutor.sandbox import Sandbox
from tutor.sandbox.runner import ServerUsage
from tutor.sandbox.trace import RunTrace

SNIPPETS: dict[str, str] = {
    "requires_grad": "import torch\nx = torch.ones(2, 2, requires_grad=True)\ny = x + 2\n"
    "print(y.grad_fn)\n",
    "backward": "import torch\nx = torch.ones(2, 2, requires_grad=True)\ny = x + 2\n"
    "z = y * y * 3\nout = z.mean()\nout.backward()\nprint(x.grad)\n",
    "accumulate": "import torch\nx = torch.ones(2, requires_grad=True)\nfor _ in range(3):\n"
    "    (x * 2).sum().backward()\nprint(x.grad)\nx.grad.zero_()\n",
    "detach_no_grad": "import torch\nx = torch.ones(2, requires_grad=True)\n"
    "y = x.detach()\nwith torch.no_grad():\n    z = x * 2\n"
    "print(y.requires_grad, z.requires_grad)\n",
    "gradient_arg": "import torch\nx = torch.randn(3, requires_grad=True)\ny = x * 2\n"
    "while y.data.norm() < 1000:\n    y = y * 2\n"
    "y.backward(torch.tensor([0.1, 1.0, 0.0001]))\nprint(x.grad)\n",
    "mm_retain_graph": "import torch\nx = torch.tensor([[1., 2.]], requires_grad=True)\n"
    "w = torch.tensor([[1., 0.], [1., 1.]], requires_grad=True)\ny = torch.mm(x, w)\n"
    "y.sum().backward(retain_graph=True)\ny.sum().backward()\nprint(x.grad, y.grad_fn)\n",
    "net": "import torch\nfrom torch import nn\nclass Net(nn.Module):\n"
    "    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, 2)\n"
    "    def forward(self, x):\n        return torch.relu(self.fc(x))\n"
    "net = Net()\nout = net(torch.randn(1, 4))\nout.sum().backward()\n"
    "print(net.fc.weight.grad.shape)\n",
}


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


def server_usage(sandbox: Sandbox) -> ServerUsage:
    usage = sandbox.server_usage()
    if usage is None:
        raise SystemExit("the sandbox server's usage cannot be read (no /proc?)")
    return usage


def load() -> str:
    return "load average " + " ".join(f"{value:.2f}" for value in os.getloadavg())


def check_snippets(sandbox: Sandbox, device: str) -> None:
    for name, code in SNIPPETS.items():  # warm-up, and a check that every snippet runs cleanly
        result = sandbox.run(code, device=device)
        if result.outcome != "ok":
            raise SystemExit(f"snippet {name!r} failed: {result.error}")


def warm_runs(sandbox: Sandbox, runs: int, device: str,
              pause_s: float = 0.0) -> tuple[list[float], dict[str, float], float]:
    """Latency of each run as a caller sees it, the CPU all processes spent per run, and the
    server's page faults per run.

    ``pause_s`` between runs: a learner pressing Run, with the standby ready and rehearsed;
    without it, back to back, each standby prepares while the previous run is going.
    """
    names = list(SNIPPETS)
    own0, before = time.process_time(), server_usage(sandbox)
    times = []
    for index in range(runs):
        code = SNIPPETS[names[index % len(names)]]
        time.sleep(pause_s)
        started = time.perf_counter()
        sandbox.run(code, device=device)
        times.append((time.perf_counter() - started) * 1000)
    time.sleep(0.2)  # let the server reap the last run
    own1, after = time.process_time(), server_usage(sandbox)
    cpu = {"parent": own1 - own0, "server": after.cpu_s - before.cpu_s,
           "runs": after.runs_cpu_s - before.runs_cpu_s}
    per_run = {key: value * 1000 / runs for key, value in cpu.items()}
    return times, per_run, (after.minor_faults - before.minor_faults) / runs


def traced_runs(runs: int, device: str, pause_s: float) -> list[RunTrace]:
    traces: list[RunTrace] = []
    names = list(SNIPPETS)
    with Sandbox(trace=traces.append) as sandbox:
        check_snippets(sandbox, device)
        traces.clear()
        for index in range(runs):
            time.sleep(pause_s)
            sandbox.run(SNIPPETS[names[index % len(names)]], device=device)
    return traces


def print_phases(title: str, traces: list[RunTrace]) -> None:
    walls: dict[str, list[float]] = defaultdict(list)
    cpus: dict[str, list[float]] = defaultdict(list)
    offsets: dict[str, list[float]] = defaultdict(list)
    for trace in traces:
        start = next(m.wall_ns for m in trace.marks if m.process == "parent"
                     and m.name == "request")
        for mark in trace.marks:
            offsets[f"{mark.process}:{mark.name}"].append((mark.wall_ns - start) / 1e6)
        for phase in trace.phases():
            walls[phase.name].append(phase.wall_ns / 1e6)
            if phase.cpu_ns is not None:
                cpus[phase.name].append(phase.cpu_ns / 1e6)
    print(f"phases of {title} traced runs (median of {len(traces)}); a phase ends at its mark "
          "and starts at the one before it; 'at' is the mark's time after the request:")
    print(f"  {'phase':24} {'at ms':>8} {'wall ms':>8} {'cpu ms':>8}")
    for name in sorted(offsets, key=lambda key: statistics.median(offsets[key])):
        wall = f"{statistics.median(walls[name]):8.2f}" if walls[name] else f"{'':8}"
        cpu = f"{statistics.median(cpus[name]):8.2f}" if cpus[name] else f"{'':8}"
        print(f"  {name:24} {statistics.median(offsets[name]):8.2f} {wall} {cpu}")

    def median_of(values: list[float]) -> str:
        return f"{statistics.median(values):7.2f} ms" if values else "      n/a"

    spans = {"request → result frame": ("parent:request", "parent:result"),
             "request → validated": ("parent:request", "parent:validated"),
             "code start → code end": ("run:code_start", "run:code_end")}
    for label, (start, end) in spans.items():
        found = [span / 1e6 for trace in traces
                 if (span := trace.wall_ns(start, end)) is not None]
        print(f"  {label:28} {median_of(found)} wall")
    critical, ready = [], 0
    for trace in traces:
        cpu = {f"{m.process}:{m.name}": m.cpu_ns for m in trace.marks if m.cpu_ns is not None}
        wall = {f"{m.process}:{m.name}": m.wall_ns for m in trace.marks}
        ready += wall["run:serving_rehearsed"] < wall["parent:request"]
        with contextlib.suppress(KeyError):
            critical.append((cpu["parent:validated"] - cpu["parent:request"]
                             + cpu["run:result_built"] - cpu["run:go"]) / 1e6)
    print(f"  CPU on the critical path:       {median_of(critical)} (parent request → "
          "validated, run go → result built; the server's hand-off is not counted)")
    print(f"  standby ready before the request: {ready} of {len(traces)} runs")
    run_cpu = [t.run_cpu_ns / 1e6 for t in traces if t.run_cpu_ns is not None]
    server_cpu = [t.server_cpu_ns / 1e6 for t in traces if t.server_cpu_ns is not None]
    faults = [float(t.run_minor_faults) for t in traces if t.run_minor_faults is not None]
    print(f"  run process CPU (fork to exit): {median_of(run_cpu)}; "
          f"minor faults {statistics.median(faults) if faults else float('nan'):.0f}")
    print(f"  server CPU per run:             {median_of(server_cpu)}")


def cold_runs(runs: int) -> tuple[list[float], float]:
    names = list(SNIPPETS)
    times = []
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with tempfile.TemporaryDirectory() as folder:
        for index in range(runs):
            path = Path(folder) / "snippet.py"
            path.write_text(SNIPPETS[names[index % len(names)]])
            started = time.perf_counter()
            subprocess.run([sys.executable, str(path)], check=True, capture_output=True)
            times.append((time.perf_counter() - started) * 1000)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000 / runs
    return times, cpu


def confinement_side_by_side(runs: int, paced_runs: int, device: str, rounds: int = 2) -> None:
    """Warm runs with confinement on and off, in turns, each in its own sandbox."""
    figures: dict[bool, dict[str, list[float]]] = {
        on: {"back": [], "paced": [], "cpu": []} for on in (True, False)}
    modes = {}
    for _ in range(rounds):
        for on in (True, False):
            with Sandbox(confine=on) as sandbox:
                sandbox.run("pass")
                modes[on] = sandbox.confinement().mode
                check_snippets(sandbox, device)
                back, cpu, _ = warm_runs(sandbox, runs // rounds, device)
                paced = warm_runs(sandbox, paced_runs // rounds, device, 0.1)[0]
            figures[on]["back"] += back
            figures[on]["paced"] += paced
            figures[on]["cpu"].append(sum(cpu.values()))
    print(f"confinement side by side ({rounds} rounds in turns, {device}):")
    print(f"  {'':22} {'paced p50':>10} {'paced p95':>10} {'b2b p50':>9} {'CPU/run':>9}")
    for on in (True, False):
        data = figures[on]
        label = f"{'on' if on else 'off'} ({modes[on]})"
        print(f"  {label:22} {percentile(data['paced'], 0.5):8.2f}ms "
              f"{percentile(data['paced'], 0.95):8.2f}ms {percentile(data['back'], 0.5):7.2f}ms "
              f"{statistics.fmean(data['cpu']):7.2f}ms")
    on, off = figures[True], figures[False]
    ratio = percentile(on["paced"], 0.5) / percentile(off["paced"], 0.5)
    print(f"  on / off: paced p50 x{ratio:.2f}"
          f", CPU per run x{statistics.fmean(on['cpu']) / statistics.fmean(off['cpu']):.2f}"
          f"; issue 18's target: paced p50 <= 10 ms with it on")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--traced-runs", type=int, default=100)
    parser.add_argument("--cold-runs", type=int, default=5)
    parser.add_argument("--paced-runs", type=int, default=200,
                        help="runs 100 ms apart, as a learner would start them")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--confinement", choices=["both", "on"], default="both",
                        help="both: first time runs with it on and off, side by side")
    args = parser.parse_args()
    print(f"{os.cpu_count()} cores, {load()} (start)")
    if args.confinement == "both":
        confinement_side_by_side(args.runs, args.paced_runs, args.device)
    with Sandbox() as sandbox:
        started = time.perf_counter()
        sandbox.run("pass")
        print(f"server warm-up (first run):  {(time.perf_counter() - started) * 1000:8.1f} ms")
        check_snippets(sandbox, args.device)
        warm, cpu, server_faults = warm_runs(sandbox, args.runs, args.device)
        paced = warm_runs(sandbox, args.paced_runs, args.device, 0.1)[0] if args.paced_runs else []
        rss = server_usage(sandbox).rss_bytes / 2**20
    p50, p95 = percentile(warm, 0.5), percentile(warm, 0.95)
    paced_p50 = percentile(paced, 0.5) if paced else 0.0
    # Two ways to run 200 warm runs: back to back, each standby prepares while the previous
    # run goes (CPU-bound on 2 cores: batch grading's case), and at a learner's pace, where
    # the next standby is ready before the request (the design's case).
    print(f"warm runs back to back ({len(warm)}, {args.device}):  p50 {p50:7.1f} ms   "
          f"p95 {p95:7.1f} ms   mean {statistics.fmean(warm):7.1f} ms")
    if paced:
        print(f"warm runs paced ({len(paced)}, 100 ms apart): p50 "
              f"{paced_p50:7.1f} ms   p95 {percentile(paced, 0.95):7.1f} ms")
    print(f"CPU per warm run:            {sum(cpu.values()):8.2f} ms  (parent "
          f"{cpu['parent']:.2f}, server {cpu['server']:.2f}, run process {cpu['runs']:.2f})")
    print(f"server page faults per run:  {server_faults:8.0f}")
    print(f"server RSS:                  {rss:8.1f} MB")
    if args.traced_runs > 0:
        print_phases("back-to-back", traced_runs(args.traced_runs, args.device, 0.0))
        print_phases("paced (100 ms apart)",
                     traced_runs(max(10, args.traced_runs // 2), args.device, 0.1))
    if args.cold_runs > 0:
        cold, cold_cpu = cold_runs(args.cold_runs)
        c50, c95 = percentile(cold, 0.5), percentile(cold, 0.95)
        print(f"cold runs ({len(cold)}, python file.py): p50 {c50:7.1f} ms   p95 {c95:7.1f} ms   "
              f"CPU {cold_cpu:7.1f} ms a run")
        paced_part = (f"{c50 / paced_p50:6.0f}x paced, " if paced else "")
        print(f"speed-up (cold p50 / warm p50): {paced_part}{c50 / p50:6.0f}x back to back;  "
              f"by CPU per run: {cold_cpu / sum(cpu.values()):6.0f}x")
    if paced:
        summary = f"warm p50 {paced_p50:.1f} ms (<= 10), "
        if args.cold_runs > 0:
            summary += f"{c50 / paced_p50:.0f}x cold (>= 100), "
        print(f"issue 3's targets, paced: {summary}server RSS {rss:.0f} MB (<= 500)")
    print(f"{load()} (end)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Warm sandbox runs against cold ``python file.py`` runs, on the seed post's snippets.

Prints p50/p95 latency of warm runs (each a fresh process forked from the warm server),
the same for cold runs (a new interpreter importing torch each time), their ratio, and the
server's resident memory. Targets on a 2-core machine: warm p50 <= 10 ms, >= 100x faster
than cold, server RSS <= 500 MB. Figures only: nothing here asserts a time.

    python benchmarks/bench_runs.py [--runs 200] [--cold-runs 5] [--device cpu]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tutor.sandbox import Sandbox

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


def server_rss_mb(sandbox: Sandbox) -> float:
    server = sandbox._server
    if server is None:
        return float("nan")
    with open(f"/proc/{server.proc.pid}/status") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def warm_runs(sandbox: Sandbox, runs: int, device: str) -> list[float]:
    names = list(SNIPPETS)
    for name in names:  # warm-up, and a check that every snippet runs cleanly
        result = sandbox.run(SNIPPETS[name], device=device)
        if result.outcome != "ok":
            raise SystemExit(f"snippet {name!r} failed: {result.error}")
    times = []
    for index in range(runs):
        code = SNIPPETS[names[index % len(names)]]
        started = time.perf_counter()
        sandbox.run(code, device=device)
        times.append((time.perf_counter() - started) * 1000)
    return times


def cold_runs(runs: int) -> list[float]:
    names = list(SNIPPETS)
    times = []
    with tempfile.TemporaryDirectory() as folder:
        for index in range(runs):
            path = Path(folder) / "snippet.py"
            path.write_text(SNIPPETS[names[index % len(names)]])
            started = time.perf_counter()
            subprocess.run([sys.executable, str(path)], check=True, capture_output=True)
            times.append((time.perf_counter() - started) * 1000)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--cold-runs", type=int, default=5)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    with Sandbox() as sandbox:
        started = time.perf_counter()
        sandbox.run("pass")
        print(f"server warm-up (first run):  {(time.perf_counter() - started) * 1000:8.1f} ms")
        warm = warm_runs(sandbox, args.runs, args.device)
        rss = server_rss_mb(sandbox)
    p50, p95 = percentile(warm, 0.5), percentile(warm, 0.95)
    print(f"warm runs ({len(warm)}, {args.device}):  p50 {p50:7.1f} ms   p95 {p95:7.1f} ms   "
          f"mean {statistics.fmean(warm):7.1f} ms")
    print(f"server RSS:                  {rss:8.1f} MB")
    if args.cold_runs > 0:
        cold = cold_runs(args.cold_runs)
        c50, c95 = percentile(cold, 0.5), percentile(cold, 0.95)
        print(f"cold runs ({len(cold)}, python file.py): p50 {c50:7.1f} ms   p95 {c95:7.1f} ms")
        print(f"speed-up (cold p50 / warm p50): {c50 / p50:6.0f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())

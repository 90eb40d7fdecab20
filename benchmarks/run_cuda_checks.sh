#!/usr/bin/env bash
# Runs the CUDA-marked sandbox tests on a machine with a GPU (they skip elsewhere), plus a
# short warm-run benchmark on the GPU. Usage: benchmarks/run_cuda_checks.sh [pytest args]
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-.venv/bin/python}"
"$PY" - <<'PY'
import torch
print("torch", torch.__version__, "cuda available:", torch.cuda.is_available(),
      "devices:", torch.cuda.device_count())
PY
"$PY" -m pytest -q -m cuda tests/sandbox "$@"
"$PY" benchmarks/bench_runs.py --device cuda --runs 50 --cold-runs 0

"""Runs on a CUDA device: only where one exists (see benchmarks/run_cuda_checks.sh)."""

from __future__ import annotations

import pytest

from tutor.sandbox import Limits, Sandbox, TensorSnapshot


def _cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


pytestmark = [
    pytest.mark.cuda,
    pytest.mark.skipif(not _cuda_available(), reason="needs a CUDA device"),
]


def test_cuda_run_puts_tensors_on_the_device(sandbox: Sandbox) -> None:
    code = ("import torch\nx = torch.ones(2, requires_grad=True)\n"
            "y = (x * 3).sum()\ny.backward()\n")
    result = sandbox.run(code, device="cuda", probes=["x", "device"])
    assert result.outcome == "ok", result
    assert result.device == "cuda:0"
    x = result.probe("x").value  # type: ignore[union-attr]
    assert isinstance(x, TensorSnapshot)
    assert x.device == "cuda:0"
    assert x.grad is not None and x.grad.values == [3.0, 3.0]  # compared on the CPU


def test_auto_prefers_cuda_and_server_stays_cuda_free(sandbox: Sandbox) -> None:
    assert sandbox.resolve_device("auto") == "cuda:0"
    # The server never initialised CUDA, so every forked run can; run twice to be sure.
    for _ in range(2):
        result = sandbox.run("import torch\nprint(torch.cuda.is_initialized())\n"
                             "torch.ones(1)\nprint(torch.cuda.is_initialized())", device="cuda")
        assert result.stdout == "False\nTrue\n", result


def test_cuda_out_of_memory_is_a_memory_outcome(sandbox: Sandbox) -> None:
    result = sandbox.run("import torch\nx = torch.empty(2**50, dtype=torch.uint8)",
                         device="cuda", limits=Limits(wall_time_s=30))
    assert result.outcome == "memory", result


def test_unknown_cuda_index_names_the_devices(sandbox: Sandbox) -> None:
    from tutor.sandbox import DeviceError

    with pytest.raises(DeviceError) as caught:
        sandbox.run("x = 1", device="cuda:99")
    assert "cuda:0" in str(caught.value)

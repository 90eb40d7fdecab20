"""Pasted programs written for a GPU: the machine's missing GPU is told from the program's
own errors, and the stand-in runner asks every run for the CPU in the GPU's place."""

from __future__ import annotations

from typing import Any

from tutor.chat.cpu_standin import CudaOnCpu, needs_gpu
from tutor.sandbox.models import RunResult


def test_the_machines_missing_gpu_is_told_from_the_programs_errors() -> None:
    assert needs_gpu("Torch not compiled with CUDA enabled")
    assert needs_gpu("RuntimeError: No CUDA GPUs are available")
    assert not needs_gpu("Expected all tensors to be on the same device, but found at least "
                         "two devices, cuda:0 and cpu!")


class _Recording:
    def __init__(self) -> None:
        self.options: list[dict[str, Any]] = []

    def run(self, code: str, **options: Any) -> RunResult:
        self.options.append(options)
        return RunResult(outcome="ok", device="cpu")

    def devices(self) -> list[str]:
        return ["cpu"]


def test_every_run_of_the_stand_in_asks_for_the_cpu_in_the_gpus_place() -> None:
    inner = _Recording()
    runner = CudaOnCpu(inner)
    runner.run("x = 1", device="cpu", instrument=True)
    runner.run("x = 2", cuda_on_cpu=False)  # the stand-in's runs are all stand-in runs
    assert [o["cuda_on_cpu"] for o in inner.options] == [True, True]
    assert inner.options[0]["instrument"] is True and runner.devices() == ["cpu"]

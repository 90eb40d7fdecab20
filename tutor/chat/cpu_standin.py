"""A pasted program's CUDA, played by the CPU: code from a forum post was written for the
asker's GPU, and the sandbox that answers it may have none. A run that stops at "Torch not
compiled with CUDA enabled" is the machine's answer, not the program's, so the chat runs it
again with the CPU in the GPU's place (:mod:`tutor.sandbox.stand_in`: a move to CUDA is
still a copy, so what it does to the graph shows as on a GPU), and diagnoses that run.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tutor.sandbox.models import RunResult
    from tutor.sandbox.runner import Runner

CUDA_MISSING_RE = re.compile(
    r"Torch not compiled with CUDA enabled|No CUDA GPUs are available|"
    r"Found no NVIDIA driver|CUDA driver initialization failed|"
    r"Attempting to deserialize object on a CUDA device"
)
"""What torch says when a program asks for a GPU the machine does not have."""


def needs_gpu(error_message: str) -> bool:
    """The run stopped because the machine has no CUDA device."""
    return CUDA_MISSING_RE.search(error_message) is not None


class CudaOnCpu:
    """``runner`` with every run made with the CPU in the GPU's place: the diagnosis of a
    pasted GPU program re-runs and tries fixes through it, so each of its runs is one."""

    def __init__(self, runner: Runner) -> None:
        self.runner = runner

    def run(self, code: str, **options: Any) -> RunResult:
        return self.runner.run(code, **{**options, "cuda_on_cpu": True})

    def devices(self) -> list[str]:
        return self.runner.devices()

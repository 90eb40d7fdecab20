"""Runs learner code in isolated processes forked from a warm torch server.

Knows nothing about lessons. The one place that starts processes.

Public API::

    from tutor.sandbox import Sandbox, Runner, RunOptions, RunResult, Probe, Limits, DeviceError

    sandbox = Sandbox()            # server starts in the background on first use / start()
    sandbox.start()                # optional: begin warming up now, returns at once
    result = sandbox.run(code, device="cpu", probes=["x.grad", Probe(expr="z", graph=True)])
    varied = sandbox.run(code, probes=["x.grad"], vary=7)   # leaves start from other values
    sandbox.devices()              # ["cpu", "cuda:0", ...] (asked of a forked child)
    sandbox.close()

``Runner`` is the protocol that grading, the TUI and the CLI depend on, so tests can pass
fakes where torch is not the point; ``RunOptions`` names the keyword options of a run.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tutor.sandbox.models import (
        Confinement,
        ErrorInfo,
        FrameInfo,
        Graph,
        GraphNode,
        Limits,
        Outcome,
        Probe,
        ProbeResult,
        RunResult,
        Snapshot,
        TensorSnapshot,
        ValueSnapshot,
        WarningInfo,
    )
    from tutor.sandbox.runner import DeviceError, Runner, RunOptions, Sandbox, default_sandbox

_WHERE = {
    **dict.fromkeys(
        ["Confinement", "ErrorInfo", "FrameInfo", "Graph", "GraphNode", "Limits", "Outcome",
         "Probe", "ProbeResult", "RunResult", "Snapshot", "TensorSnapshot", "ValueSnapshot",
         "WarningInfo"],
        "tutor.sandbox.models",
    ),
    **dict.fromkeys(["DeviceError", "RunOptions", "Runner", "Sandbox", "default_sandbox"],
                    "tutor.sandbox.runner"),
}
"""Loaded on first use: the server (``python -m tutor.sandbox.server``) and every run are
started through this package, and need none of it (pydantic's import alone is ~0.1 s of
the server's start-up, and its memory is copied into each fork's page tables)."""


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'tutor.sandbox' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "Confinement",
    "DeviceError",
    "ErrorInfo",
    "FrameInfo",
    "Graph",
    "GraphNode",
    "Limits",
    "Outcome",
    "Probe",
    "ProbeResult",
    "RunOptions",
    "RunResult",
    "Runner",
    "Sandbox",
    "Snapshot",
    "TensorSnapshot",
    "ValueSnapshot",
    "WarningInfo",
    "default_sandbox",
]

"""Runs learner code in isolated processes forked from a warm torch server.

Knows nothing about lessons. The one place that starts processes.

Public API::

    from tutor.sandbox import Sandbox, Runner, RunResult, Probe, Limits, DeviceError

    sandbox = Sandbox()            # server starts in the background on first use / start()
    sandbox.start()                # optional: begin warming up now, returns at once
    result = sandbox.run(code, device="cpu", probes=["x.grad", Probe(expr="z", graph=True)])
    sandbox.devices()              # ["cpu", "cuda:0", ...] (asked of a forked child)
    sandbox.close()

``Runner`` is the protocol that grading, the TUI and the CLI depend on, so tests can pass
fakes where torch is not the point.
"""

from tutor.sandbox.models import (
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
from tutor.sandbox.runner import DeviceError, Runner, Sandbox, default_sandbox

__all__ = [
    "DeviceError",
    "ErrorInfo",
    "FrameInfo",
    "Graph",
    "GraphNode",
    "Limits",
    "Outcome",
    "Probe",
    "ProbeResult",
    "RunResult",
    "Runner",
    "Sandbox",
    "Snapshot",
    "TensorSnapshot",
    "ValueSnapshot",
    "WarningInfo",
    "default_sandbox",
]

"""Where a warm run's time goes: phase marks from the parent, the server and the run.

Off by default. ``Sandbox(trace=callback)`` asks every run for its marks and hands the
callback one :class:`RunTrace` per run (benchmarks use it; nothing else should). Each mark
holds the wall clock (``perf_counter_ns``: CLOCK_MONOTONIC, shared by all processes of the
machine) and the CPU time its process had used by then, so a phase's cost can be told
apart from time spent waiting for a core on a loaded machine. The run's marks are data from
learner-controlled memory: they are validated like the result and only ever printed.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Process = Literal["parent", "server", "run"]

MAX_MARKS = 32
"""A run's trace frame with more marks than this is rejected."""


class _Trace(BaseModel):
    # A field's docstring is its description in the JSON Schema, as a dataclass field's
    # docstring documents it elsewhere in the package.
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class Mark(_Trace):
    process: Process
    name: str = Field(max_length=40)
    wall_ns: int
    """time.perf_counter_ns() when the mark was taken."""
    cpu_ns: int | None = None
    """CPU time of the process (the parent: of its thread) by then."""


class Phase(_Trace):
    """The stretch between two consecutive marks (in wall-clock order)."""

    name: str
    """'<process>:<mark>', the mark that ends the phase."""
    wall_ns: int
    cpu_ns: int | None = None
    """CPU the ending mark's process used since its own previous mark."""


class RunTrace(_Trace):
    marks: list[Mark]
    run_cpu_ns: int | None = None
    """All CPU of the run's process, exit included (from wait4)."""
    run_minor_faults: int | None = None
    """Minor page faults of the run's process: mostly copy-on-write."""
    server_cpu_ns: int | None = None
    """Server CPU since the previous request: dispatch, reaping, sweeping and forking the next
    standby."""

    def phases(self) -> list[Phase]:
        ordered = sorted(self.marks, key=lambda mark: mark.wall_ns)
        last_cpu: dict[str, int] = {"run": 0}  # a run's CPU clock starts at its fork
        phases = []
        for index, mark in enumerate(ordered):
            cpu = None
            if mark.cpu_ns is not None:
                if mark.process in last_cpu:
                    cpu = mark.cpu_ns - last_cpu[mark.process]
                last_cpu[mark.process] = mark.cpu_ns
            if index:
                phases.append(Phase(name=f"{mark.process}:{mark.name}",
                                    wall_ns=mark.wall_ns - ordered[index - 1].wall_ns,
                                    cpu_ns=cpu))
        return phases

    def wall_ns(self, start: str, end: str) -> int | None:
        """Wall time between two marks named ``process:name``; None if either is missing."""
        found = {f"{mark.process}:{mark.name}": mark.wall_ns for mark in self.marks}
        if start in found and end in found:
            return found[end] - found[start]
        return None

"""The bench-only trace: every phase of a run is marked, in order, by the right process."""

from __future__ import annotations

import pytest

from tutor.sandbox import Probe, Sandbox
from tutor.sandbox.trace import Mark, RunTrace

ORDER = ["run:standby_ready", "run:serving_rehearsed", "parent:request", "parent:sent",
         "server:received", "server:handed", "parent:pid", "run:go", "run:request", "run:limits",
         "run:code_start", "run:code_end", "run:probes", "run:result_built", "parent:result",
         "parent:validated", "server:reaped"]
"""Every mark a traced run has. Only pairs linked by a message are compared: the others race
(a mark is taken after the send, so the receiver may note its mark first)."""
CAUSAL = [("parent:request", "server:received"), ("server:received", "server:handed"),
          ("server:received", "run:go"), ("run:go", "run:request"),
          ("run:request", "run:limits"), ("run:limits", "run:code_start"),
          ("run:code_start", "run:code_end"), ("run:code_end", "run:probes"),
          ("run:probes", "run:result_built"), ("run:result_built", "parent:result"),
          ("parent:result", "parent:validated"), ("run:result_built", "server:reaped"),
          ("parent:request", "parent:sent"), ("server:received", "parent:pid"),
          ("run:standby_ready", "run:serving_rehearsed"), ("run:serving_rehearsed", "run:go")]


@pytest.fixture(scope="module")
def traces() -> list[RunTrace]:
    found: list[RunTrace] = []
    with Sandbox(trace=found.append) as sandbox:
        for _ in range(2):
            result = sandbox.run("import torch\nx = torch.ones(2, requires_grad=True)\n"
                                 "(x * 3).sum().backward()\n", probes=[Probe(expr="x.grad")])
            assert result.outcome == "ok"
    return found


def test_each_run_reports_every_phase_in_causal_order(traces: list[RunTrace]) -> None:
    assert len(traces) == 2
    for trace in traces:
        when = {f"{mark.process}:{mark.name}": mark.wall_ns for mark in trace.marks}
        rehearsed = when.pop("run:rehearsed", None)  # only when the standby had idle time
        assert sorted(when) == sorted(ORDER)
        if rehearsed is not None:
            assert when["run:serving_rehearsed"] <= rehearsed <= when["run:go"]
        for before, after in CAUSAL:
            assert when[before] <= when[after], (before, after)
        assert trace.wall_ns("parent:request", "parent:validated") == (
            when["parent:validated"] - when["parent:request"])
        assert trace.run_cpu_ns is not None and trace.run_cpu_ns > 0
        assert trace.run_minor_faults is not None and trace.run_minor_faults > 0


def test_phases_measure_cpu_per_process(traces: list[RunTrace]) -> None:
    phases = traces[-1].phases()
    assert len(phases) == len(traces[-1].marks) - 1 >= len(ORDER) - 1
    assert all(phase.wall_ns >= 0 for phase in phases)
    by_name = {phase.name: phase for phase in phases}
    assert by_name["run:code_end"].cpu_ns is not None and by_name["run:code_end"].cpu_ns > 0
    assert by_name["server:handed"].cpu_ns is None  # the server reports wall time only
    assert traces[-1].server_cpu_ns is not None and traces[-1].server_cpu_ns > 0


def test_phase_cpu_is_per_process_delta() -> None:
    trace = RunTrace(marks=[
        Mark(process="run", name="a", wall_ns=10, cpu_ns=5),
        Mark(process="parent", name="b", wall_ns=20, cpu_ns=100),
        Mark(process="run", name="c", wall_ns=30, cpu_ns=9),
        Mark(process="parent", name="d", wall_ns=45, cpu_ns=130),
    ])
    assert [(p.name, p.wall_ns, p.cpu_ns) for p in trace.phases()] == [
        ("parent:b", 10, None), ("run:c", 10, 4), ("parent:d", 15, 30)]
    assert trace.wall_ns("run:a", "parent:d") == 35
    assert trace.wall_ns("run:a", "run:zzz") is None



def test_rehearsal_runs_every_step_without_error() -> None:
    from tutor.sandbox.child import REHEARSAL, rehearse

    asked: list[int] = []
    rehearse(lambda: bool(asked.append(1)))  # errors here would be swallowed in a standby
    assert len(asked) >= len(REHEARSAL)


def test_rehearsal_stops_as_soon_as_a_request_waits() -> None:
    from tutor.sandbox.child import rehearse

    asked: list[int] = []

    def waiting() -> bool:
        asked.append(1)
        return len(asked) >= 2

    rehearse(waiting)
    assert len(asked) == 2


def test_the_rehearsal_backward_is_left_out_where_torch_has_a_gpu_backend() -> None:
    """The build decides, through torch's public accelerator query (where torch has one),
    never by asking a driver."""
    from types import SimpleNamespace

    import torch

    from tutor.sandbox.child import backward_starts_no_device_threads

    def build(accelerator: object, cuda: bool = False) -> SimpleNamespace:
        backends = SimpleNamespace(cuda=SimpleNamespace(is_built=lambda: cuda),
                                   mps=SimpleNamespace(is_built=lambda: False))
        fake = SimpleNamespace(backends=backends)
        if accelerator is not None:
            fake.accelerator = SimpleNamespace(current_accelerator=lambda: accelerator())
        return fake

    assert backward_starts_no_device_threads(build(lambda: None))
    assert not backward_starts_no_device_threads(build(lambda: torch.device("xpu")))
    assert not backward_starts_no_device_threads(build(None, cuda=True))  # torch < 2.6
    assert backward_starts_no_device_threads(build(None))

"""Data that crosses from a run back to the parent: plain, validated, never code.

The child writes JSON; the parent validates it into these models. Nothing here is
unpickled, and nothing from the child is trusted beyond being data of this shape.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Outcome = Literal["ok", "error", "timeout", "memory", "output_limit", "crashed", "exited"]
"""How a run ended: ``ok`` ran to the end; ``error`` raised; ``timeout`` hit the wall-time
limit; ``memory`` hit the memory limit; ``output_limit`` printed too much; ``crashed`` died
from a signal (e.g. a segfault); ``exited`` called ``sys.exit``/``os._exit``."""

Scalar = bool | int | float | str | None
"""Tensor element in a snapshot. Non-finite floats travel as the strings ``"nan"``,
``"inf"`` and ``"-inf"`` so the data stays strict JSON."""


class _Data(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TensorSnapshot(_Data):
    kind: Literal["tensor"] = "tensor"
    type: str = Field(
        "torch.Tensor",
        description="The exact class, from type(value) (not __class__): 'torch.Tensor', "
        "'torch.nn.parameter.Parameter', or 'subclass:MODULE.NAME'. The grader counts only the "
        "first two as tensors.",
    )
    shape: list[int]
    dtype: str = Field(description="e.g. 'torch.float32'")
    device: str = Field(description="e.g. 'cpu', 'cuda:0'")
    requires_grad: bool
    is_leaf: bool
    grad_fn: str | None = Field(None, description="Class name of grad_fn, e.g. 'MmBackward0'.")
    numel: int
    values: Any = Field(
        None, description="Nested lists of Scalar (on CPU); None when numel exceeds the cap."
    )
    truncated: bool = False
    grad: TensorSnapshot | None = Field(None, description="Snapshot of .grad (None if None).")


class ValueSnapshot(_Data):
    kind: Literal["value"] = "value"
    type: str = Field(description="Python type name, e.g. 'int', 'Size', 'Net'.")
    repr: str = Field(description="repr(), capped.")
    value: Any = Field(None, description="JSON value for bool/int/float/str/None/lists of them.")


Snapshot = Annotated[TensorSnapshot | ValueSnapshot, Field(discriminator="kind")]


class GraphNode(_Data):
    id: int
    name: str = Field(description="Node class name: 'MulBackward0', 'AccumulateGrad', ...")
    next: list[int] = Field(default_factory=list, description="Ids of next_functions nodes.")
    leaf_shape: list[int] | None = Field(None, description="For AccumulateGrad: the leaf's shape.")
    leaf_name: str | None = Field(None, description="For AccumulateGrad: learner's variable name.")


class Graph(_Data):
    """The autograd graph behind a tensor, as data a UI can draw. ``root`` is None when the
    tensor has no ``grad_fn`` (a leaf, or created without history)."""

    root: int | None
    nodes: list[GraphNode] = Field(default_factory=list)
    truncated: bool = False


class FrameInfo(_Data):
    line: int
    function: str
    source: str = ""


class ErrorInfo(_Data):
    type: str = Field(description="Exception class name, e.g. 'RuntimeError'.")
    message: str
    line: int | None = Field(None, description="Line in the learner's code (1-based).")
    source_line: str | None = None
    traceback: list[FrameInfo] = Field(
        default_factory=list, description="Only the learner's frames, outermost first."
    )
    locals: dict[str, Snapshot] = Field(
        default_factory=dict, description="Tensor-valued locals of the failing learner frame."
    )


class WarningInfo(_Data):
    category: str
    message: str
    line: int | None = None


class Probe(_Data):
    """An expression evaluated in the learner's namespace after the code ran."""

    expr: str
    graph: bool = Field(False, description="Also return the autograd graph of the tensor.")


class ProbeResult(_Data):
    expr: str
    value: Snapshot | None = None
    error: ErrorInfo | None = None
    graph: Graph | None = None


class Limits(_Data):
    wall_time_s: float = 10.0
    memory_mb: int = Field(2048, description="Extra address space the run may allocate.")
    output_bytes: int = Field(64_000, description="stdout + stderr kept; more is cut.")
    max_processes: int = Field(16, description="Processes the run may start (incl. itself).")
    source_bytes: int = Field(1_000_000, description="Largest program accepted, in bytes.")


class Confinement(_Data):
    """What the kernel confines runs with (see :mod:`tutor.sandbox.confine`)."""

    mode: Literal["root", "user", "none"] = Field(
        description="'root': namespaces as root, each run its own uid; 'user': inside an "
        "unprivileged user namespace; 'none': the kernel gave no namespaces (limits only).")
    namespaces: list[str] = Field(default_factory=list)
    reason: str | None = Field(None, description="Why not, where mode is 'none'.")

    @property
    def confined(self) -> bool:
        return self.mode != "none"


class RunResult(_Data):
    outcome: Outcome
    device: str
    stdout: str = ""
    stderr: str = ""
    output_truncated: bool = False
    error: ErrorInfo | None = None
    warnings: list[WarningInfo] = Field(default_factory=list)
    probes: list[ProbeResult] = Field(default_factory=list)
    duration_ms: float = 0.0
    exit_code: int | None = Field(None, description="For 'exited': the status passed to exit.")
    signal: int | None = Field(None, description="For 'crashed': the signal number.")
    torch_version: str = ""

    @property
    def ok(self) -> bool:
        return self.outcome == "ok"

    def probe(self, expr: str) -> ProbeResult | None:
        for result in self.probes:
            if result.expr == expr:
                return result
        return None

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
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


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
    called_by: str | None = Field(None, description=(
        "The library function that called this learner function, where library code did "
        "(``torch.nn.Module.eval``); None where learner code called it."))
    overrides: str | None = Field(None, description=(
        "For a learner method library code called: the torch method of the same name it "
        "takes the place of (``torch.nn.Module.train``)."))
    overridden_signature: str | None = Field(None, description=(
        "That torch method's parameters, as ``inspect.signature`` writes them."))


class Callee(_Data):
    """A torch callable an error says was called with the wrong arguments, as the run found
    it: what its documentation says, for the learner's diagnosis."""

    name: str = Field(description="Public name, e.g. 'torch.optim.LBFGS.step'.")
    signature: str = Field(description="Its parameters, as ``inspect.signature`` writes them.")
    summary: str = Field("", description="The first paragraph of its documentation.")
    parameter: str | None = Field(None, description="The parameter the message names.")
    reason: Literal["missing", "unexpected", "constraint"] | None = Field(None, description=(
        "Why the message names it: left out, not a parameter of the call, or given a value "
        "outside its constraint (a distribution's)."))
    parameter_doc: str = Field("", description="What the documentation says of a missing one.")


class ErrorInfo(_Data):
    type: str = Field(description="Exception class name, e.g. 'RuntimeError'.")
    message: str
    line: int | None = Field(None, description="Line in the learner's code (1-based).")
    source_line: str | None = None
    traceback: list[FrameInfo] = Field(
        default_factory=list, description="Only the learner's frames, outermost first."
    )
    locals: dict[str, Snapshot] = Field(
        default_factory=dict, description="Tensor-valued locals of the failing learner frame, "
        "and the tuples, lists and NumPy arrays named on its line."
    )
    kinds: dict[str, str] = Field(default_factory=dict, description=(
        "For the other names on the failing line that the failing frame holds: the name of "
        "their value's type ('bool', 'NoneType', 'DataLoader')."))
    callee: Callee | None = Field(None, description=(
        "For a TypeError about a call's arguments: the torch callable it names."))
    raised_by: Literal["torch", "call", "learner", "other"] | None = Field(None, description=(
        "Whose code raised it, from the traceback: torch's Python code, a C function a learner's "
        "line called (every torch operation), a raise in learner code, or other code."))


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


class RunBudget(_Data):
    """How much of an instrumented run's training a diagnosis reads: each loop that trains
    ends once the run made ``backwards`` backward() passes and ``steps`` optimizer steps
    (:mod:`tutor.sandbox.budget`)."""

    backwards: int = Field(ge=1)
    steps: int = Field(0, ge=0)


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


class OpEvidence(_Data):
    """A notable op of the learner's code: it cut the graph, changed a tensor in place, set
    requires_grad, or read ``.data``."""

    line: int
    kind: Literal["cut", "inplace", "requires_grad", "data", "reorder"]
    op: str = Field(max_length=80)
    detail: str = Field("", max_length=200, description="'no_grad', 'nondifferentiable', "
                        "'python', 'first used on line 4', 'modified a tensor made by ...'")
    name: str | None = Field(None, max_length=120, description="The learner's name for it.")
    grad_fn: str | None = Field(None, max_length=80)
    requires_grad: bool | None = None
    count: int = 1
    first_use: int | None = Field(None, description="requires_grad: line it was first used.")
    grad_fn_after: str | None = Field(None, max_length=80, description="inplace: after it.")
    module: str | None = Field(None, max_length=120, description="inplace: inside the "
                               "forward of this module (the learner's name for it).")
    module_kind: str | None = Field(None, max_length=80)
    made_line: int | None = Field(None, description="inplace: line of the op that made it.")
    used_line: int | None = Field(None, description="inplace: last line that used it before.")


class ChainLink(_Data):
    """One op in the history of a tensor, newest first."""

    line: int
    op: str = Field(max_length=80)
    requires_grad: bool | None = None
    grad_fn: str | None = Field(None, max_length=80)
    inputs_rg: bool = False
    grad_enabled: bool = True
    cut: str | None = Field(None, max_length=40)
    shape: list[int] | None = Field(None, max_length=8)
    dtype: str | None = Field(None, max_length=40)
    module: str | None = Field(None, max_length=120, description="Inside this module's "
                               "forward (the learner's name for the module called).")
    index: int | None = Field(None, description="The op's place in the run's record: two "
                              "histories that hold the same index share that tensor.")
    layer: str | None = Field(None, max_length=120, description="The innermost module whose "
                              "forward ran the op (its path from the module called: "
                              "'model.cnn.classifier.1').")
    layer_kind: str | None = Field(None, max_length=80)
    args: str | None = Field(None, max_length=80, description="Shape ops (an index, view, "
                             "flatten, cat, squeeze ...): their arguments that are not tensors, "
                             "as Python writes them ('0', '-1, 4', 'dim=0').")


class BackwardEvidence(_Data):
    line: int
    name: str | None = Field(None, max_length=120)
    loss: float | Literal["nan", "inf", "-inf"] | None = Field(
        None, description="Its value when it has one element.")
    shape: list[int] | None = Field(None, max_length=8)
    requires_grad: bool | None = None
    grad_fn: str | None = Field(None, max_length=80)
    reached: list[str] = Field(default_factory=list, max_length=20)
    grads_none: list[str] = Field(default_factory=list, max_length=20)
    chain: list[ChainLink] = Field(default_factory=list, max_length=12)
    raised: str | None = Field(None, max_length=80)
    accumulated: int | None = Field(None, description="Leaves it reaches whose .grad already "
                                    "held a gradient of an earlier backward().")


class StepEvidence(_Data):
    line: int | None = None
    optimizer: str = Field(max_length=80)
    where: str | None = Field(None, max_length=80, description="The function (qualified name) "
                              "whose code called step(): two `self.optimizer` of two classes "
                              "are two optimizers.")
    kind: str = Field(max_length=80)
    params: list[str] = Field(default_factory=list, max_length=20)
    n_params: int = 0
    grads_none: int = 0
    grads_zero: int = 0
    lr: float | None = None
    after_backward: int = Field(0, description="backward() calls seen before this step.")
    moved: float | None = Field(None, description="The largest relative change of one of its "
                                "parameters in this step (|after - before| / |before|).")
    grads_nonfinite: int = Field(0, description="Parameters whose gradient held nan/inf.")
    passes: int = Field(0, description="backward() calls since this optimizer's last step.")
    passes_line: int | None = Field(None, description="Their line, when all came from one.")
    cleared: int = Field(0, description="Of those passes after the first, how many found "
                         "the gradients cleared (nothing left of the earlier passes).")
    discarded: list[int] = Field(default_factory=list, max_length=8, description="Lines of "
                                 "those passes whose gradients the next pass found cleared: "
                                 "no step used them.")
    carried: int | None = Field(None, description="Where every backward() since this "
                                "optimizer's previous step found the parameters of it that it "
                                "reached still holding a gradient (nothing cleared them between "
                                "the two steps): the line of the last of them.")
    fresh: bool = Field(False, description="The optimizer's first step: one built anew "
                        "before every step starts from no state each time.")
    low_precision: str | None = Field(None, max_length=40, description="The dtype of its "
                                      "float16/bfloat16 parameters, where it has some.")
    stalled: float | None = Field(None, description="Of those parameters' entries that "
                                  "their gradient pushed, the share the step left unchanged "
                                  "(an update smaller than the dtype's spacing rounds away).")


class InputFacts(_Data):
    """The spread of the values a module call was given first."""

    mean: float
    std: float
    low: float
    high: float


class ModuleCallEvidence(_Data):
    line: int
    module: str = Field(max_length=80)
    kind: str = Field(max_length=80)
    training: bool
    grad_enabled: bool
    dropout: bool = False
    batchnorm: bool = False
    count: int = 1
    after_backward: bool = False
    backward: int = Field(0, description="Calls whose parameters the next backward() reached "
                          "(forwards that were trained on).")
    inputs: InputFacts | None = Field(None, description="The first call's first input.")


class ParamEvidence(_Data):
    name: str = Field(max_length=120)
    shape: list[int] = Field(default_factory=list, max_length=8)
    requires_grad: bool
    changed: bool | None = Field(None, description="Its values differ at the end of the run.")
    grad_none: bool
    in_optimizer: bool
    reached: bool = Field(description="Some backward() graph reaches it.")
    steps_without_grad: bool = Field(False, description="backward() gave it a gradient, an "
                                     "optimizer stepped it, and every one of its steps found "
                                     "its .grad None (cleared before the step).")
    forward_change: int | None = Field(None, description="A line of the learner's code where "
                                       "a module's forward pass changed it in place (outside "
                                       "an optimizer step).")
    unregistered: bool = Field(False, description="A tensor attribute of a module that is not "
                               "an nn.Parameter (parameters() leaves it out).")
    rows_same_start: bool | None = Field(None, description="2-D and more: every row (output "
                                         "unit) equal to the first, at the start.")
    rows_same_end: bool | None = Field(None, description="The same, at the end of the run.")
    init_line: int | None = Field(None, description="The last line that wrote its values in "
                                  "place before the first backward().")
    moved: float | None = Field(None, description="Its largest relative change in one step.")
    held_in: str | None = Field(None, max_length=80, description="A plain list, tuple or dict "
                                "attribute of a module that holds it (``parameters()`` does "
                                "not look there), as the path from that module: 'hids'.")
    container: str | None = Field(None, max_length=20, description="That container's type.")


class OperandEvidence(_Data):
    """A tensor given to the op that raised, and where the learner's code made it."""

    arg: str = Field(max_length=40, description="'0', '1', ... or the keyword's name.")
    name: str | None = Field(None, max_length=120)
    shape: list[int] = Field(default_factory=list, max_length=8)
    dtype: str = Field("", max_length=40)
    device: str = Field("", max_length=40)
    requires_grad: bool = False
    grad_fn: str | None = Field(None, max_length=80)
    line: int | None = Field(None, description="Line of the op that made it.")
    op: str | None = Field(None, max_length=80, description="The op that made it.")
    history: list[ChainLink] = Field(default_factory=list, max_length=24,
                                     description="The ops that made it, newest first.")
    low: float | None = Field(None, description="Integer tensors: the smallest value.")
    high: float | None = Field(None, description="Integer tensors: the largest value.")


ConfigValue = int | bool | str | list[int] | None


class FailedOpEvidence(_Data):
    """The torch op that raised, its operands and the module whose forward called it; or,
    where a module's own Python code raised before any op did (``op`` is ``forward``: a
    BatchNorm's or an RNN's check of its input's dimensions), that module and its inputs."""

    line: int
    op: str = Field(max_length=80)
    module: str | None = Field(None, max_length=120)
    module_kind: str | None = Field(None, max_length=80)
    inputs: list[OperandEvidence] = Field(default_factory=list, max_length=8)
    config: dict[str, ConfigValue] = Field(default_factory=dict, max_length=24, description=(
        "The module's sizes as its attributes hold them (in_features, input_size, "
        "in_channels, num_features, batch_first, start_dim ...)."))


class OperandFacts(_Data):
    """What the values of an op's floating operand were (finite ones only)."""

    zeros: bool = False
    negative: bool = False
    low: float | None = None
    high: float | None = None
    empty: bool = Field(False, description="It had no element at all (an empty selection).")
    numel: int | None = Field(None, description="How many elements it had (a standard "
                              "deviation of one element is nan).")


class NonFiniteEvidence(_Data):
    """The first op of the learner's code whose result (forward) or whose gradient (backward:
    its output's gradient finite, its inputs' not) became nan/inf from finite values."""

    phase: Literal["forward", "backward"]
    line: int
    op: str = Field(max_length=80)
    value: Literal["nan", "inf", "-inf"]
    operands: list[OperandFacts] = Field(default_factory=list, max_length=2)
    backwards: int = Field(0, description="backward() calls before it.")
    steps: int = Field(0, description="Optimizer steps before it.")
    from_inf: bool = Field(False, description=(
        "It made nan out of operands that held inf and no nan (a softmax over a row whose "
        "every score is -inf, inf - inf), not from finite values."))


class LossInputEvidence(_Data):
    """What a loss that expects scores (cross_entropy, the with-logits BCE) or log-probabilities
    (nll_loss) was given: the op that made it and what its values look like."""

    line: int
    loss: str = Field(max_length=80)
    name: str | None = Field(None, max_length=120)
    producer: str | None = Field(None, max_length=80, description="The op that made it, "
                                 "through views and reshapes.")
    producer_line: int | None = None
    producer_module: str | None = Field(None, max_length=120, description="The layer the "
                                        "producer ran in (the learner's path to it).")
    producer_kind: str | None = Field(None, max_length=80)
    low: float | None = None
    high: float | None = None
    sums_to_one: bool | None = Field(None, description="Each row (over dim 1) sums to 1.")
    log_probs: bool | None = Field(None, description="Each row's logsumexp is 0.")
    backward: bool = Field(False, description="It was computed with grad enabled.")
    target_low: float | None = Field(None, description="Losses that compare values: the "
                                     "smallest target value.")
    target_high: float | None = None
    outside: float | None = Field(None, description="The share of the targets outside what "
                                  "the producing activation can output.")
    one_sample: int | None = Field(None, description="cross_entropy given a 1-D input and a "
                                   "float target of its shape: the number of scores it read "
                                   "as the classes of one sample.")
    target_binary: bool | None = Field(None, description="With one_sample: every target is 0 "
                                       "or 1 (labels of separate samples, not a distribution).")
    target_cast: str | None = Field(None, max_length=80, description="The target came from "
                                    "an integer cast that cut off fractions.")
    target_cast_line: int | None = None
    scale: float | None = Field(None, description="The largest absolute prediction.")
    squashed_before: str | None = Field(None, max_length=80, description="The producer (a "
                                        "sigmoid or softmax) was given what the same kind of "
                                        "activation had already made: applied twice.")
    squashed_before_line: int | None = None


class DropoutEvidence(_Data):
    """A functional dropout that stayed on while the module calling it was in eval mode."""

    line: int
    op: str = Field(max_length=80)
    module: str | None = Field(None, max_length=120)
    kind: str | None = Field(None, max_length=80)
    p: float | None = None
    count: int = 1


class InputChangedEvidence(_Data):
    """A module changed a tensor it was given in place (its output is another tensor), and
    the learner's code read that tensor afterwards, expecting the old values."""

    line: int = Field(description="The line that called the module.")
    module: str | None = Field(None, max_length=120)
    kind: str | None = Field(None, max_length=80)
    inner: str | None = Field(None, max_length=120, description="The layer whose op did it.")
    inner_kind: str | None = Field(None, max_length=80)
    op: str = Field(max_length=80)
    op_line: int | None = None
    read_line: int | None = None
    name: str | None = Field(None, max_length=120)


class SharedNormEvidence(_Data):
    """One normalization layer called at two stages of one forward pass: the second input
    was computed from the first's output."""

    module: str = Field(max_length=120)
    kind: str = Field(max_length=80)
    lines: list[int] = Field(default_factory=list, max_length=8)


class UnfreezeEvidence(_Data):
    """Parameters set requires_grad=False and back to True before any training step."""

    line: int = Field(description="Where it was turned back on.")
    frozen_line: int
    params: list[str] = Field(default_factory=list, max_length=20)
    count: int = 0


class FlatSoftmaxEvidence(_Data):
    """A softmax over a dimension of size 1: every output is exactly 1 (0 for log_softmax),
    whatever its input."""

    line: int
    op: str = Field(max_length=80)
    dim: int
    shape: list[int] = Field(default_factory=list, max_length=8)
    module: str | None = Field(None, max_length=120)
    kind: str | None = Field(None, max_length=80)


class CrossedEvidence(_Data):
    """An element-wise op between N values of shape (N,) and N of shape (N, 1): broadcast
    into an (N, N) result, every element against every element."""

    line: int
    op: str = Field(max_length=80)
    n: int = Field(ge=2)
    column: str | None = Field(None, max_length=120, description="The (N, 1) operand.")
    vector: str | None = Field(None, max_length=120, description="The (N,) operand.")


class TrainingEvidence(_Data):
    """The training trace of an instrumented re-run (:mod:`tutor.sandbox.training_trace`)."""

    misplaced: list[str] = Field(default_factory=list, max_length=10, description=(
        "Hyper-parameters (names of an optimizer's defaults: 'lr', 'momentum') set as "
        "attributes of an optimizer that stepped, where it never reads them."))
    nonfinite: list[NonFiniteEvidence] = Field(default_factory=list, max_length=12)
    """Where nan/inf first came out of finite values, forward or backward."""
    loss_inputs: list[LossInputEvidence] = Field(default_factory=list, max_length=20)
    """What losses expecting scores or log-probabilities were given, and by which op."""
    dropouts: list[DropoutEvidence] = Field(default_factory=list, max_length=20)
    """Functional dropouts left on in eval mode."""
    changed_inputs: list[InputChangedEvidence] = Field(default_factory=list, max_length=10)
    """Inputs a module changed in place that the learner's code read again."""
    shared_norms: list[SharedNormEvidence] = Field(default_factory=list, max_length=10)
    """Normalization layers called at two stages of one forward pass."""
    unfrozen: list[UnfreezeEvidence] = Field(default_factory=list, max_length=10)
    """Freezes undone before any step."""
    flat_softmaxes: list[FlatSoftmaxEvidence] = Field(default_factory=list, max_length=10)
    """Softmaxes over a dimension of size 1."""
    batch_softmaxes: list[FlatSoftmaxEvidence] = Field(default_factory=list, max_length=10)
    """Softmaxes, outside any module, over the first dimension of an (N, C) tensor whose N is
    the batch the model was just given: the samples compared, not the classes."""
    crossed: list[CrossedEvidence] = Field(default_factory=list, max_length=10)
    """Element-wise ops that paired a vector with a column into a square."""
    rates: list[float] = Field(default_factory=list, max_length=2)
    """The first optimizer's learning rate at its first and at its last step, over the whole
    run (its steps after the fully recorded ones included)."""
    step_calls: int = 0
    """How many optimizer steps the run made, recorded in full or not."""


class BuiltInForwardEvidence(_Data):
    """Parameters registered while a module's forward ran: a layer or ``nn.Parameter`` made
    inside ``forward``, new at each call."""

    line: int
    module: str | None = Field(None, max_length=120, description="Whose forward it was.")
    kind: str | None = Field(None, max_length=80)
    made: str = Field(max_length=80, description="The layer's class, or 'Parameter'.")
    attr: str | None = Field(None, max_length=80, description="For 'Parameter': its name.")
    count: int = Field(0, description="Parameters that line registered.")
    in_optimizer: bool = Field(False, description="An optimizer held one of them.")


class SelfCopyEvidence(_Data):
    """Tensors copied onto themselves (``copy_`` whose source shares the destination's
    storage): a ``load_state_dict`` from the network itself."""

    line: int
    count: int = 0
    params: list[str] = Field(default_factory=list, max_length=20)


class AliasEvidence(_Data):
    """One module object bound to several names of the learner's."""

    names: list[str] = Field(default_factory=list, max_length=8)
    kind: str = Field(max_length=80)
    lines: list[int] = Field(default_factory=list, max_length=8, description="Where it was "
                             "called.")
    trained: bool = Field(False, description="An optimizer steps its parameters.")


class FlagEvidence(_Data):
    """A freezing flag that freezes nothing: ``requires_grad`` set as an attribute of a
    Module, or a misspelt ``requires_grad`` on parameters."""

    target: str = Field(max_length=120, description="The module (or first parameter).")
    attr: str = Field(max_length=40)
    kind: str = Field(max_length=80)
    value: str = Field("", max_length=40)
    on: Literal["module", "parameter"]
    params: list[str] = Field(default_factory=list, max_length=20)


class AccountingEvidence(_Data):
    """Where the trainable tensors live (:mod:`tutor.sandbox.param_accounting`)."""

    built_in_forward: list[BuiltInForwardEvidence] = Field(default_factory=list,
                                                           max_length=20)
    """Layers and parameters made anew at each forward call."""
    self_copies: list[SelfCopyEvidence] = Field(default_factory=list, max_length=20)
    """Weights copied onto themselves."""
    aliases: list[AliasEvidence] = Field(default_factory=list, max_length=20)
    """Module objects bound to several of the learner's names."""
    module_flags: list[FlagEvidence] = Field(default_factory=list, max_length=20)
    """Freezing flags that freeze nothing."""


class CutEvidence(_Data):
    """Where a budget ended the run's training (:mod:`tutor.sandbox.budget`): the loop of
    ``line`` ended after ``backwards`` backward() passes and ``steps`` optimizer steps; the
    code after it ran."""

    line: int
    backwards: int = Field(ge=0)
    steps: int = Field(ge=0)


class BatchMixingEvidence(_Data):
    """A module whose output for one sample changed when the other samples of its batch
    changed order (:mod:`tutor.sandbox.batch_probe`, eval mode, no gradients)."""

    module: str = Field(max_length=80)
    line: int | None = Field(None, description="The learner's line of the first operation "
                             "whose output mixed the samples, where the probe found one.")
    op: str | None = Field(None, max_length=60)
    batch: int = Field(ge=0, description="Samples in the batch the probe gave it.")


class Evidence(_Data):
    """What an instrumented re-run saw (:mod:`tutor.sandbox.evidence`): the learner's claim."""

    failed: FailedOpEvidence | None = None
    """The op that raised, its operands and where each was made."""
    ops: list[OpEvidence] = Field(default_factory=list, max_length=150)
    truncated: bool = False
    """Some of the run went unrecorded (more ops than the lists keep, or the recorder could
    not read a value): what is missing is not evidence of absence."""
    backwards: list[BackwardEvidence] = Field(default_factory=list, max_length=300)
    steps: list[StepEvidence] = Field(default_factory=list, max_length=300)
    modules: list[ModuleCallEvidence] = Field(default_factory=list, max_length=60)
    params: list[ParamEvidence] = Field(default_factory=list, max_length=150)
    training: TrainingEvidence = Field(default_factory=TrainingEvidence)
    accounting: AccountingEvidence = Field(default_factory=AccountingEvidence)
    batch_mixing: list[BatchMixingEvidence] = Field(default_factory=list, max_length=2)
    cut: CutEvidence | None = Field(None, description="Only for a run given a budget that "
                                    "ended its training.")


class Varied(_Data):
    """What a run asked to vary (:mod:`tutor.sandbox.vary`) changed: the learner's claim."""

    count: int = Field(0, ge=0, description="Leaves whose starting values it changed.")
    names: list[str] = Field(default_factory=list, max_length=20, description=(
        "The names those leaves were bound to when the code ended."))
    starts: dict[str, Any] = Field(default_factory=dict, max_length=20, description=(
        "For small ones among them: the values they started from (nested lists), by name."))


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
    evidence: Evidence | None = Field(None, description="Only for a run asked to instrument.")
    varied: Varied | None = Field(None, description="Only for a run asked to vary.")

    @property
    def ok(self) -> bool:
        return self.outcome == "ok"

    def probe(self, expr: str) -> ProbeResult | None:
        for result in self.probes:
            if result.expr == expr:
                return result
        return None

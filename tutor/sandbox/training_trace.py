"""The training trace of an instrumented re-run: what a program that runs without error did
to its parameters, so a silent bug falls out of data rather than out of the source's shape.

:class:`~tutor.sandbox.evidence.Recorder` owns one and calls it from the hooks it already has
(every tensor op of the learner's code, module forward hooks, optimizer step hooks, every
``backward()``). It keeps, as plain data:

- the first ops whose result (forward) or gradient (backward, through autograd node hooks)
  became nan/inf while what they were given was finite, with what their operands held
  (zeros, negatives, the range): "loss nan" traced to the line and the op;
- what each loss that expects scores or log-probabilities was given: the op that made it
  (through views and reshapes, inside a layer or a helper) and whether its values are
  probabilities;
- per optimizer step, how far its parameters moved (relative change), how many gradients
  held nan/inf, and how many backward() passes fed it and whether the gradients were cleared
  between them;
- modules: a functional dropout left on in eval mode, a layer that changed its input in place
  while the caller read that input afterwards, one normalization layer used at two stages of
  a forward pass, module forwards that were trained on;
- parameters: tensor attributes of a module that are not registered parameters, rows that
  are identical (symmetric initialization) at the start and the end, the line that last wrote
  their values before training, a freeze undone before any step used it.

Everything is sampled like the rest of the recorder (the first calls of each line and op, the
first steps), and its own failures only mark the evidence truncated.
"""

from __future__ import annotations

import itertools
import math
import weakref
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tutor.sandbox.evidence import Recorder

Data = dict[str, Any]

MAX_NONFINITE = 12
MAX_ENTRIES = 20
MAX_HOOKS = 4000
HOOKED_BACKWARDS = 30
"""backward() passes whose ops are watched for a gradient turning nan/inf."""
MAX_STEP_NUMEL = 2_000_000
"""Parameter values copied at a step to measure how far it moved them."""
LOSSES = {
    "cross_entropy": "scores", "binary_cross_entropy_with_logits": "scores",
    "nll_loss": "log-probabilities", "kl_div": "log-probabilities",
    "mse_loss": "values", "l1_loss": "values", "smooth_l1_loss": "values",
    "huber_loss": "values", "binary_cross_entropy": "probabilities",
}
CASTS = frozenset({"long", "int", "short", "to", "type", "int64", "__int__"})
"""Ops that may cast a tensor to an integer dtype."""
ELEMENTWISE = frozenset({
    "sub", "__sub__", "__rsub__", "rsub", "add", "__add__", "__radd__", "mul", "__mul__",
    "__rmul__", "div", "__truediv__", "__rtruediv__", "eq", "__eq__", "ne", "__ne__", "lt",
    "__lt__", "le", "__le__", "gt", "__gt__", "ge", "__ge__"})
"""Two-operand element-wise ops: where a vector meets a column they broadcast to a square."""
DIFFERENCES = frozenset({"sub", "__sub__", "__rsub__", "rsub"})
"""A prediction minus its target, written by hand: ``((y - model(x)) ** 2).mean()``."""
RANGES = {"relu": (0.0, math.inf), "relu_": (0.0, math.inf), "relu6": (0.0, 6.0),
          "sigmoid": (0.0, 1.0), "sigmoid_": (0.0, 1.0), "softmax": (0.0, 1.0),
          "_softmax": (0.0, 1.0), "tanh": (-1.0, 1.0), "tanh_": (-1.0, 1.0),
          "hardtanh": (-1.0, 1.0), "softplus": (0.0, math.inf), "hardsigmoid": (0.0, 1.0)}
"""Bounded activations and the values they can produce."""
ACTIVATIONS = frozenset({"softmax", "_softmax", "sigmoid", "sigmoid_", "log_softmax",
                         "_log_softmax", "logsigmoid", "tanh"}) | frozenset(RANGES)
SQUASHERS = {"sigmoid": "sigmoid", "sigmoid_": "sigmoid", "softmax": "softmax",
             "_softmax": "softmax"}
"""Activations that squash into a fixed range: applied twice, the second one only shrinks it."""
PASS_THROUGH = frozenset({
    "view", "reshape", "squeeze", "unsqueeze", "flatten", "contiguous", "transpose",
    "permute", "float", "double", "to", "clone", "__getitem__", "view_as", "reshape_as",
    "type", "cpu", "cuda", "t",
})
"""Ops that pass a tensor on without changing what its values are."""
DROPOUTS = frozenset({"dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
                      "feature_alpha_dropout"})


def _kind(value: Any) -> str:
    return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")



ROWS_REL = 1e-4
"""Rows that started the same get the same updates in exact arithmetic, but a matrix kernel may
sum each row in another order (another CPU's SIMD tiles): equal up to this share of the
tensor's largest value counts as the same."""


def _rows_alike(torch: Any, tensor: Any) -> bool:
    first = tensor[:1].expand_as(tensor)
    scale = float(tensor.abs().max()) if tensor.numel() else 0.0
    return bool(torch.allclose(tensor.double(), first.double(), rtol=0.0,
                               atol=ROWS_REL * scale))

class TrainingTrace:
    """The training half of one instrumented run's evidence."""

    def __init__(self, recorder: Recorder) -> None:
        self.rec = recorder
        self.torch = recorder.torch
        self.nonfinite: list[Data] = []
        self.rates: list[float] = []
        self.rated: int | None = None
        self.step_calls = 0
        self.nonfinite_seen: set[tuple[int, str]] = set()
        self.backward_culprit = False
        self.hooks = 0
        self.pending: dict[int, list[Any]] = {}
        self.loss_inputs: dict[tuple[int, str], Data] = {}
        self.dropouts: dict[int, Data] = {}
        self.args_stack: list[tuple[Any, set[int]]] = []
        self.marks: dict[int, list[Data]] = {}  # module id -> in-place changes of its inputs
        self.changed: list[Data] = []
        self.watch_reads: list[tuple[weakref.ref[Any], Data]] = []
        self.norm_calls: dict[int, Data] = {}
        self.top_calls = 0
        self.shared: dict[int, Data] = {}
        self.flags: dict[int, list[tuple[int, bool, int]]] = {}
        self.flag_refs: dict[int, Any] = {}
        self.writes: dict[int, int] = {}
        self.step_before: list[tuple[Any, Any]] | None = None
        self.step_entry: Data | None = None
        self.last_step: dict[int, int] = {}
        self.moved: dict[int, float] = {}
        self.fed: list[tuple[Any, tuple[Any, ...] | None]] = []
        self.trained_calls: dict[tuple[Any, ...], int] = {}
        self.stepped: weakref.WeakSet[Any] = weakref.WeakSet()
        """The optimizers that took a step (weakly: one made anew may reuse a freed id)."""
        self.unregistered: set[int] = set()
        self.flat: dict[int, Data] = {}
        self.across: dict[int, Data] = {}
        """Softmaxes over the batch dimension of a model's (N, C) output, by line."""
        self.batch: int | None = None
        """The first size of what the last top-level module call was given."""
        self.crossed: dict[int, Data] = {}
        self.step_count = 0
        self.pass_steps: dict[int, int] = {}
        """backward() pass (its index) -> optimizer steps taken before it, of any optimizer."""
        self.outputs: list[weakref.ref[Any]] = []
        """The last outputs of top-level module calls (a model's predictions)."""

    # -- every op ----------------------------------------------------------------------
    def on_op(self, name: str, inputs: list[Any], args: tuple[Any, ...], kwargs: dict[str, Any],
              out: Any, index: int, line: int, frame: Any, inplace: bool, target: Any) -> None:
        torch = self.torch
        if self.watch_reads and inputs:
            self._reads(inputs, line)
        if name == "set requires_grad" or name == "requires_grad_":
            if target is not None:
                value = args[1] if len(args) > 1 else kwargs.get("requires_grad", True)
                self._flag(target, line, bool(value))
            return
        if name.startswith(("get ", "set ")):
            return  # an attribute read or write, not an op on values
        if inplace and target is not None:
            self._inplace(name, target, line)
        if name in CASTS and out is not None and index >= 0 and inputs:
            self._cast(inputs[0], out, index)
        if out is not None and inputs and out.is_floating_point():
            if len(self.nonfinite) < MAX_NONFINITE and (line, name) not in self.nonfinite_seen:
                self._forward_finite(name, inputs, out, line)
            if (not self.backward_culprit and out.requires_grad and out.grad_fn is not None
                    and self.hooks < MAX_HOOKS and len(self.rec.backwards) < HOOKED_BACKWARDS
                    and torch.is_grad_enabled()):
                self._hook(out, inputs, index, line, name)
        if name in ACTIVATIONS and self.rec.stack:
            module = self.rec._current_module()
            if module is not None:
                self.rec.records[index]["inner"] = module
        if name in ("softmax", "log_softmax") and out is not None and len(self.flat) < 10:
            self._flat_softmax(name, args, kwargs, out, line)
        if name in ELEMENTWISE and out is not None and len(inputs) == 2 and (
                line not in self.crossed and len(self.crossed) < 10):
            self._crossed(name, inputs, out, line, frame)
        if name in LOSSES and inputs and (line, name) not in self.loss_inputs and len(
                self.loss_inputs) < MAX_ENTRIES:
            self._loss_input(name, inputs[0], line, frame, inputs[1] if len(inputs) > 1
                             else None)
        elif name in DIFFERENCES and len(inputs) == 2 and self.outputs and (
                line, "sub") not in self.loss_inputs and len(self.loss_inputs) < MAX_ENTRIES:
            self._difference(inputs, line, frame)
        if name in DROPOUTS:
            self._dropout(name, kwargs, line)
        elif name == "scaled_dot_product_attention":
            # its dropout_p has no training flag: it drops whatever the module's mode
            p = kwargs.get("dropout_p", args[4] if len(args) > 4 else 0.0)
            self._dropout(name, {"p": p}, line)

    def _cast(self, source: Any, out: Any, index: int) -> None:
        """A floating tensor with fractional values cast to an integer dtype: the fractions
        are cut off (0.7 becomes 0)."""
        torch = self.torch
        if out.is_floating_point() or out.is_complex() or out.dtype == torch.bool or not (
                isinstance(source, torch.Tensor) and source.is_floating_point()) or not (
                0 < source.numel() <= MAX_STEP_NUMEL):
            return
        with torch.no_grad():
            if bool((source != source.trunc()).any()):
                self.rec.records[index]["truncated"] = True

    # -- nan / inf -----------------------------------------------------------------------
    def _facts(self, tensor: Any) -> Data:
        torch = self.torch
        if isinstance(tensor, torch.Tensor) and tensor.is_floating_point() and \
                tensor.numel() == 0:
            return {"empty": True}
        if not isinstance(tensor, torch.Tensor) or not tensor.is_floating_point() or not (
                0 < tensor.numel() <= MAX_STEP_NUMEL):
            return {}
        with torch.no_grad():
            values = tensor.detach()
            finite = values[torch.isfinite(values)]
            if not finite.numel():
                return {}
            return {"zeros": bool((finite == 0).any()), "negative": bool((finite < 0).any()),
                    "low": float(finite.min()), "high": float(finite.max()),
                    "numel": int(values.numel())}

    def _finite(self, tensor: Any) -> bool:
        """Every value of ``tensor`` is finite. A sum of values is finite only then (a nan
        or an inf among them makes it nan or inf), and a sum costs a twentieth of testing
        each value: only a sum that overflowed is tested value by value."""
        torch = self.torch
        with torch.no_grad():
            if not tensor.is_complex() and math.isfinite(float(tensor.sum())):
                return True
            return bool(torch.isfinite(tensor).all())

    def _all_finite(self, tensors: list[Any]) -> bool:
        torch = self.torch
        return all(self._finite(t) for t in tensors
                   if isinstance(t, torch.Tensor) and t.is_floating_point())

    def _forward_finite(self, name: str, inputs: list[Any], out: Any, line: int) -> None:
        torch = self.torch
        with torch.no_grad():
            if out.numel() > MAX_STEP_NUMEL or self._finite(out):
                return
            bad = out.detach()[~torch.isfinite(out.detach())]
        from_inf = False
        if not self._all_finite(inputs):
            # infinities in, nan out (a fully masked row's softmax): where the nan is made
            with torch.no_grad():
                nan_in = any(bool(torch.isnan(t).any()) for t in inputs
                             if isinstance(t, torch.Tensor) and t.is_floating_point())
                if nan_in or not bool(torch.isnan(bad).any()):
                    return
            from_inf = True
            bad = bad[torch.isnan(bad)]
        self.nonfinite_seen.add((line, name))
        self.nonfinite.append({
            "phase": "forward", "line": line, "op": name[:80], "value": _kind(float(bad[0])),
            "operands": [f for f in (self._facts(t) for t in inputs[:2]) if f],
            "backwards": len(self.rec.backwards), "steps": len(self.rec.steps),
            "from_inf": from_inf})

    def _hook(self, out: Any, inputs: list[Any], index: int, line: int, name: str) -> None:
        self.hooks += 1
        self.pending[index] = inputs[:2]
        trace = self

        def seen(grad_inputs: Any, grad_outputs: Any) -> None:
            if trace.backward_culprit:
                return
            try:
                trace._gradient(grad_inputs, grad_outputs, index, line, name)
            except Exception:
                trace.rec.truncated = True

        out.grad_fn.register_hook(seen)

    def _gradient(self, grad_inputs: Any, grad_outputs: Any, index: int, line: int,
                  name: str) -> None:
        torch = self.torch
        with torch.no_grad():
            if not all(self._finite(g) for g in grad_outputs if g is not None):
                return
            bad = [g for g in grad_inputs if g is not None and not self._finite(g)]
        if not bad:
            return
        self.backward_culprit = True
        wrong = bad[0][~torch.isfinite(bad[0])]
        operands = [f for f in (self._facts(t) for t in self.pending.get(index, [])) if f]
        self.nonfinite.append({
            "phase": "backward", "line": line, "op": name[:80],
            "value": _kind(float(wrong[0])), "operands": operands,
            "backwards": max(0, len(self.rec.backwards) - 1), "steps": len(self.rec.steps)})

    def _flat_softmax(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any],
                      out: Any, line: int) -> None:
        dim = kwargs.get("dim", args[1] if len(args) > 1 else None)
        if not isinstance(dim, int) or line in self.flat or out.dim() < 2 or not (
                -out.dim() <= dim < out.dim()):
            return
        module = self.rec._current_module() if self.rec.stack else None
        if out.shape[dim] != 1:
            # (N, C) scores normalised over the N samples: each class compared across the
            # batch, not the classes of one sample (the first size is what the model was fed)
            if out.dim() == 2 and dim % 2 == 0 and out.shape[1] > 1 and out.shape[0] > 1 and \
                    out.shape[0] == self.batch and not self.rec.stack and \
                    line not in self.across and len(self.across) < 10:
                self.across[line] = {"line": line, "op": name, "dim": dim,
                                     "shape": list(out.shape), "module": None, "kind": None}
            return
        self.flat[line] = {"line": line, "op": name, "dim": dim, "shape": list(out.shape)[:8],
                           "module": module[0][:120] if module else None,
                           "kind": module[1][:80] if module else None}

    def _crossed(self, name: str, inputs: list[Any], out: Any, line: int, frame: Any) -> None:
        """N values of shape (N,) against N of shape (N, 1): every element paired with every
        element, an (N, N) result, where one result a sample was meant (an accuracy, a loss
        written by hand). A column made from the vector itself (``x[:, None] - x``, pairwise
        differences) shares its storage and is meant."""
        torch = self.torch
        a, b = inputs
        if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
            return
        shapes = (tuple(a.shape), tuple(b.shape))
        n = out.shape[0] if out.dim() == 2 and out.shape[0] == out.shape[1] else 0
        if n < 2 or shapes not in (((n,), (n, 1)), ((n, 1), (n,))):
            return
        if a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr():
            return
        column, vector = (a, b) if a.dim() == 2 else (b, a)
        self.crossed[line] = {"line": line, "op": name, "n": int(n),
                              "column": self.rec._name_of(column, frame),
                              "vector": self.rec._name_of(vector, frame)}

    # -- what a loss was given -------------------------------------------------------------
    def _producer(self, tensor: Any) -> Data | None:
        index = self.rec._record_of(tensor)
        for _ in range(8):
            if index is None:
                return None
            record = self.rec.records[index]
            if record["op"] not in PASS_THROUGH:
                return record
            sources = [i for i in record["inputs"] if i is not None]
            index = sources[0] if sources else None
        return None

    def _squashed_before(self, made: Data) -> Data | None:
        """The record of the same squashing activation (sigmoid, softmax) that made the input
        of ``made``, itself one: ``sigmoid(sigmoid(x))`` keeps every value in [0.5, 0.73]."""
        kind = SQUASHERS.get(str(made["op"]))
        sources = [i for i in made["inputs"] if i is not None]
        if kind is None or not sources:
            return None
        index: int | None = sources[0]
        for _ in range(8):
            if index is None:
                return None
            record = self.rec.records[index]
            if record["op"] not in PASS_THROUGH:
                return record if SQUASHERS.get(str(record["op"])) == kind else None
            inputs = [i for i in record["inputs"] if i is not None]
            index = inputs[0] if inputs else None
        return None

    def _difference(self, inputs: list[Any], line: int, frame: Any) -> None:
        """``target - model(x)``: the model's output compared with a tensor that does not
        require grad, as a hand-written loss does."""
        outputs = [ref() for ref in self.outputs]
        made = [t for t in inputs if any(t is o for o in outputs)]
        other = [t for t in inputs if not any(t is o for o in outputs)]
        if len(made) != 1 or len(other) != 1 or other[0].requires_grad or (
                other[0].shape != made[0].shape):
            return
        self._loss_input("sub", made[0], line, frame, other[0])

    def _target(self, entry: Data, target: Any, producer: str | None) -> None:
        """What the loss compares the prediction with: its range, the share of it that the
        producing activation cannot reach, whether an integer cast truncated it."""
        torch = self.torch
        if not isinstance(target, torch.Tensor) or target.numel() == 0 or \
                target.numel() > MAX_STEP_NUMEL or target.is_complex():
            return
        with torch.no_grad():
            values = target.detach().double()
            if not self._finite(values):
                return
            entry.update(target_low=float(values.min()), target_high=float(values.max()))
            bounds = RANGES.get(producer or "")
            if bounds is not None:
                outside = (values < bounds[0] - 1e-6) | (values > bounds[1] + 1e-6)
                entry["outside"] = float(outside.double().mean())
        made = self._producer(target)
        if made is not None and made.get("truncated"):
            entry.update(target_cast=str(made["op"])[:80], target_cast_line=made["line"])

    def _one_sample(self, entry: Data, scores: Any, target: Any) -> None:
        """cross_entropy given a 1-D input reads it as ONE sample's class scores, and a float
        target of the same shape as that sample's class probabilities: the shape of N
        binary outputs with their 0/1 labels, trained as one N-class sample."""
        torch = self.torch
        if not isinstance(target, torch.Tensor) or not target.is_floating_point() or \
                target.shape != scores.shape or scores.numel() < 2:
            return
        with torch.no_grad():
            labels = target.detach()
            binary = bool(((labels == 0) | (labels == 1)).all())
        entry.update(one_sample=scores.numel(), target_binary=binary)

    def _loss_input(self, name: str, tensor: Any, line: int, frame: Any,
                    target: Any = None) -> None:
        torch = self.torch
        if not isinstance(tensor, torch.Tensor) or not tensor.is_floating_point() or \
                tensor.numel() > MAX_STEP_NUMEL or tensor.numel() == 0:
            return
        made = self._producer(tensor)
        entry: Data = {"line": line, "loss": name, "name": self.rec._name_of(tensor, frame),
                       "backward": bool(tensor.requires_grad and torch.is_grad_enabled())}
        if made is not None:
            inner = made.get("inner")
            entry.update(producer=str(made["op"])[:80], producer_line=made["line"],
                         producer_module=inner[0][:120] if inner else None,
                         producer_kind=inner[1][:80] if inner else None)
            before = self._squashed_before(made)
            if before is not None:
                entry.update(squashed_before=str(before["op"])[:80],
                             squashed_before_line=before["line"])
        with torch.no_grad():
            values = tensor.detach()
            if self._finite(values):
                entry.update(low=float(values.min()), high=float(values.max()))
                if values.dim() >= 2 and values.shape[1] > 1:
                    rows = values.sum(dim=1)
                    entry["sums_to_one"] = bool(((rows - 1).abs() < 1e-4).all())
                    entry["log_probs"] = bool((torch.logsumexp(values, dim=1).abs()
                                               < 1e-4).all())
        if name == "cross_entropy" and tensor.dim() == 1:
            self._one_sample(entry, tensor, target)
        if LOSSES.get(name) in ("values", "probabilities") or name == "sub":
            self._target(entry, target, entry.get("producer"))
            entry["scale"] = float(tensor.detach().abs().max()) if self._finite(
                tensor.detach()) else None
        self.loss_inputs[(line, name)] = entry

    # -- modules ---------------------------------------------------------------------------
    def _dropout(self, name: str, kwargs: dict[str, Any], line: int) -> None:
        if not kwargs.get("training", True) or not float(kwargs.get("p", 0.5) or 0) > 0:
            return
        owner = next((m for m in reversed(self.rec.stack)
                      if not isinstance(m, self._dropout_layers())), None)
        if owner is None or owner.training:
            return
        entry = self.dropouts.get(line)
        if entry is not None:
            entry["count"] += 1
            return
        if len(self.dropouts) >= MAX_ENTRIES:
            return
        module = self.rec._current_module()
        self.dropouts[line] = {"line": line, "op": name, "module": module[0][:120] if module
                               else None, "kind": type(owner).__name__[:80],
                               "p": float(kwargs.get("p", 0.5)), "count": 1}

    def module_pre(self, module: Any, args: Any) -> None:
        torch = self.torch
        ids = {id(a) for a in (args if isinstance(args, tuple) else (args,))
               if isinstance(a, torch.Tensor)}
        self.args_stack.append((module, ids))
        if len(self.rec.stack) == 1:
            self.top_calls += 1
            first = args[0] if isinstance(args, tuple) and args else args
            self.batch = int(first.shape[0]) if isinstance(first, torch.Tensor) and \
                first.dim() >= 1 else None
            if torch.is_grad_enabled():
                self.fed.append((module, self._call_key(module)))
        if isinstance(module, self._norm_layers()) and args and isinstance(
                args[0], torch.Tensor):
            self._norm_call(module, args[0])

    def _dropout_layers(self) -> tuple[type, ...]:
        nn = self.torch.nn
        return (nn.Dropout, nn.Dropout1d, nn.Dropout2d, nn.Dropout3d, nn.AlphaDropout,
                nn.FeatureAlphaDropout)

    def _norm_layers(self) -> tuple[type, ...]:
        nn = self.torch.nn
        return (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d, nn.SyncBatchNorm)

    def module_post(self, module: Any, output: Any) -> None:
        if not self.args_stack or self.args_stack[-1][0] is not module:
            return  # its pre hook ran inside the recorder's own work
        self.args_stack.pop()
        marks = self.marks.pop(id(module), None)
        torch = self.torch
        if len(self.rec.stack) == 1 and isinstance(output, torch.Tensor):
            self.outputs = [*self.outputs[-3:], weakref.ref(output)]
        if isinstance(module, self._norm_layers()) and isinstance(
                output, torch.Tensor) and id(module) in self.norm_calls:
            self.norm_calls[id(module)]["out"] = self.rec._record_of(output)
        if not marks:
            return
        outputs = output if isinstance(output, (tuple, list)) else (output,)
        frame = self.rec._learner_frame()
        for mark in marks:
            changed = mark["ref"]()
            if changed is None or any(o is changed for o in outputs):
                continue  # the module returns what it changed: that is its job
            for outer, _ in self.args_stack:  # the outer modules see it done inside them
                self.marks.pop(id(outer), None)
            if len(self.changed) >= MAX_ENTRIES:
                return
            name = self.rec._name_of(module, frame) if frame is not None else None
            entry = {"line": frame.f_lineno if frame is not None else mark["line"],
                     "module": (name or type(module).__name__)[:120],
                     "kind": type(module).__name__[:80], "inner": mark["inner"],
                     "inner_kind": mark["inner_kind"], "op": mark["op"][:80],
                     "op_line": mark["line"], "read_line": None,
                     "name": self.rec._name_of(changed, frame) if frame is not None else None}
            self.watch_reads.append((weakref.ref(changed), entry))

    def _inplace(self, name: str, target: Any, line: int) -> None:
        if not self.rec.backwards and target.is_leaf and target.requires_grad:
            self.writes[id(target)] = line
        holders = [m for m, ids in self.args_stack if id(target) in ids]
        if not holders:
            return
        module = self.rec._current_module()
        for holder in holders:
            self.marks.setdefault(id(holder), []).append({
                "ref": weakref.ref(target), "line": line, "op": name,
                "inner": module[0][:120] if module else None,
                "inner_kind": module[1][:80] if module else None})

    def _reads(self, inputs: list[Any], line: int) -> None:
        keep = []
        for ref, entry in self.watch_reads:
            tensor = ref()
            if tensor is None:
                continue
            if any(t is tensor for t in inputs):
                entry["read_line"] = line
                self.changed.append(entry)
                continue
            keep.append((ref, entry))
        self.watch_reads = keep[-MAX_ENTRIES:]

    def _norm_call(self, module: Any, tensor: Any) -> None:
        frame = self.rec._learner_frame()
        line = frame.f_lineno if frame is not None else 0
        seen = self.norm_calls.get(id(module))
        if seen is None or seen["call"] != self.top_calls:
            self.norm_calls[id(module)] = {"call": self.top_calls, "line": line, "out": None}
            return
        if id(module) in self.shared or len(self.shared) >= MAX_ENTRIES:
            return
        if seen["out"] is not None and self._descends(self.rec._record_of(tensor), seen["out"]):
            path = self.rec._current_module()
            self.shared[id(module)] = {
                "module": (path[0] if path else type(module).__name__)[:120],
                "kind": type(module).__name__[:80], "lines": [seen["line"], line]}

    def _descends(self, start: int | None, ancestor: int) -> bool:
        """Whether the record ``start`` was computed from the record ``ancestor``."""
        todo: list[int | None] = [start]
        seen: set[int] = set()
        while todo and len(seen) < 2000:
            index = todo.pop()
            if index is None or index in seen or index < ancestor:
                continue
            if index == ancestor:
                return True
            seen.add(index)
            todo.extend(self.rec.records[index]["inputs"])
        return False

    def _call_key(self, module: Any) -> tuple[Any, ...] | None:
        frame = self.rec._learner_frame()
        info = self.rec.module_info.get(id(module))
        if frame is None or info is None:
            return None
        return (frame.f_lineno, info[0], module.training, True)

    # -- requires_grad flags ---------------------------------------------------------------
    def _flag(self, tensor: Any, line: int, value: bool) -> None:
        key = id(tensor)
        if key not in self.flags and len(self.flags) >= 2000:
            return
        self.flags.setdefault(key, []).append((line, value, len(self.rec.steps)))
        self.flag_refs[key] = tensor

    def _unfrozen(self) -> list[Data]:
        groups: dict[tuple[int, int], Data] = {}
        for key, history in self.flags.items():
            for (off_line, off, off_steps), (on_line, on, on_steps) in itertools.pairwise(
                    history):
                if off or not on or on_steps != off_steps:
                    continue
                group = groups.setdefault((off_line, on_line), {
                    "line": on_line, "frozen_line": off_line, "params": [], "count": 0})
                group["count"] += 1
                info = self.rec.params.get(key)
                if info is not None and len(group["params"]) < 20:
                    group["params"].append(str(info.get("global") or info["name"])[:120])
        return list(groups.values())[:10]

    # -- backward and steps ----------------------------------------------------------------
    def after_backward(self, reached: frozenset[int]) -> None:
        """A backward() pass ended; ``reached``: the ids of the leaves it reached."""
        self.pending.clear()
        self.pass_steps[len(self.rec.backwards) - 1] = self.step_count
        if not self.fed:
            return
        for module, key in self.fed:
            if key is not None and any(id(p) in reached for p in module.parameters()):
                self.trained_calls[key] = self.trained_calls.get(key, 0) + 1
        self.fed = []

    def before_step(self, optimizer: Any, params: list[Any], entry: Data) -> None:
        torch = self.torch
        backwards = self.rec.backwards
        # an optimizer's first step: one made anew before every step keeps no state
        try:
            entry["fresh"] = optimizer not in self.stepped
            self.stepped.add(optimizer)
        except TypeError:  # an optimizer-like object without weak references
            pass
        # a new optimizer's window starts at the last step of any (an earlier one, now gone,
        # stepped the passes before it)
        start = self.last_step.get(id(optimizer), max(self.last_step.values(), default=0))
        passes = backwards[start:]
        self.last_step[id(optimizer)] = len(backwards)
        lines = {b["line"] for b in passes}
        entry["carried"] = None if entry.get("fresh", True) else self._carried(start, params)
        entry.update(passes=len(passes), passes_line=lines.pop() if len(lines) == 1 else None,
                     cleared=sum(1 for b in passes[1:] if b.get("accumulated") == 0),
                     discarded=self._discarded(start))
        with torch.no_grad():
            entry["grads_nonfinite"] = sum(1 for p in params if p.grad is not None
                                           and not self._finite(p.grad))
            total, before = 0, []
            for p in params:
                total += p.numel()
                if p.grad is None or total > MAX_STEP_NUMEL:
                    continue
                before.append((p, p.detach().clone()))
        self.step_before, self.step_entry = before, entry

    def _carried(self, start: int, params: list[Any]) -> int | None:
        """Where every pass since the optimizer's previous step that reached its parameters
        found those it reached still holding a gradient (nothing cleared them between the
        two steps): the line of the last of them, the one that feeds this step."""
        mine = {id(p) for p in params}
        line = None
        for index in range(start, len(self.rec.backwards)):
            leaves, held = self.rec.held_at.get(index, (frozenset(), frozenset()))
            own = leaves & mine
            if own and not own <= held:
                return None
            if own:
                line = int(self.rec.backwards[index]["line"])
        return line

    def _discarded(self, start: int) -> list[int]:
        """Lines of the passes since ``start`` whose gradients the next pass found cleared
        with no step of any optimizer in between: nothing used them (a generator's pass
        that also wrote the discriminator's gradients was used by the generator's step)."""
        passes = self.rec.backwards
        lines = {passes[i]["line"] for i in range(start, len(passes) - 1)
                 if passes[i + 1].get("accumulated") == 0
                 and self.pass_steps.get(i) == self.pass_steps.get(i + 1) is not None}
        return sorted(lines)[:8]

    def after_step(self) -> None:
        self.step_count += 1
        before, entry = self.step_before, self.step_entry
        self.step_before = self.step_entry = None
        if before is None or entry is None:
            return
        torch = self.torch
        moved = 0.0
        low = (torch.float16, torch.bfloat16)
        pushed = kept = 0
        with torch.no_grad():
            for p, old in before:
                scale = float(old.norm())
                change = float((p.detach() - old).norm())
                ratio = change / scale if scale > 0 else (1.0 if change > 0 else 0.0)
                if math.isfinite(ratio):
                    self.moved[id(p)] = max(self.moved.get(id(p), 0.0), ratio)
                    moved = max(moved, ratio)
                if p.dtype in low and p.grad is not None:
                    # a low-precision weight: how many of the entries its gradient pushed
                    # the step left where they were (the update rounded away)
                    entry["low_precision"] = str(p.dtype)
                    pushed_here = p.grad != 0
                    pushed += int(pushed_here.sum())
                    kept += int((pushed_here & (p.detach() == old)).sum())
        entry["moved"] = moved
        if pushed:
            entry["stalled"] = kept / pushed

    # -- the end ---------------------------------------------------------------------------
    def registered(self, module: Any, name: str) -> None:
        """Tensors that require grad kept on ``module`` (or its submodules) without being
        registered parameters: parameters() and so the optimizer leave them out."""
        torch = self.torch
        for path, sub in module.named_modules():
            for attr, value in list(vars(sub).items()):
                if isinstance(value, torch.Tensor) and not isinstance(
                        value, torch.nn.Parameter) and value.requires_grad and value.is_leaf:
                    self.unregistered.add(id(value))
                    self.rec._watch(value, ".".join(p for p in (name, path, attr) if p))

    def param_facts(self, key: int, tensor: Any, start: Any) -> Data:
        torch = self.torch
        facts: Data = {"unregistered": key in self.unregistered,
                       "init_line": self.writes.get(key), "moved": self.moved.get(key)}
        if tensor.dim() >= 2 and tensor.shape[0] >= 2 and tensor.numel() <= MAX_STEP_NUMEL:
            with torch.no_grad():
                facts["rows_same_end"] = _rows_alike(torch, tensor)
                if start is not None and start.shape == tensor.shape:
                    facts["rows_same_start"] = _rows_alike(torch, start)
        return facts

    def _misplaced(self) -> list[str]:
        """Hyper-parameters set as attributes of an optimizer (``optimizer.lr = 0.01``):
        names of its ``defaults`` found in its own ``__dict__``. An optimizer reads them from
        its param_groups only, so such an attribute changes nothing."""
        found: list[str] = []
        for optimizer in list(self.stepped):
            try:
                own = object.__getattribute__(optimizer, "__dict__")
                defaults = own.get("defaults")
            except AttributeError:
                continue
            if isinstance(defaults, dict):
                found += [k for k in own if isinstance(k, str) and k in defaults
                          and k not in found]
        return found[:10]

    def rate_seen(self, optimizer: Any) -> None:
        """Every step of the first optimizer that steps: its learning rate then (a schedule's
        course over the whole training, after the fully recorded steps too)."""
        self.step_calls += 1
        if self.rated is None:
            self.rated = id(optimizer)
        if id(optimizer) != self.rated or not optimizer.param_groups:
            return
        lr = optimizer.param_groups[0].get("lr")
        if isinstance(lr, (int, float)) and not isinstance(lr, bool):
            self.rates = [self.rates[0] if self.rates else float(lr), float(lr)]

    def finish(self) -> Data:
        return {
            "rates": self.rates, "step_calls": self.step_calls,
            "misplaced": self._misplaced(),
            "nonfinite": self.nonfinite[:MAX_NONFINITE],
            "loss_inputs": list(self.loss_inputs.values())[:MAX_ENTRIES],
            "dropouts": list(self.dropouts.values())[:MAX_ENTRIES],
            "changed_inputs": self.changed[:10],
            "shared_norms": list(self.shared.values())[:10],
            "unfrozen": self._unfrozen(),
            "flat_softmaxes": list(self.flat.values()),
            "batch_softmaxes": list(self.across.values()),
            "crossed": list(self.crossed.values()),
        }

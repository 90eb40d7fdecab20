"""Evidence for the diagnosis, collected in the run's own process by an instrumented re-run.

Only a run whose request asks for it (``instrument``) is instrumented: a normal run never
uses this module (the fork template imports it, so an instrumented run does not pay for it).
The recorder watches the learner's code through torch's public hooks:

- a ``TorchFunctionMode`` sees every tensor op called from the learner's file: the line, the
  op, whether its inputs and output require grad, its ``grad_fn``, whether it is in place,
  and which op made each input (provenance), so a tensor without a graph can be traced back
  to the line and op that cut it. An op changed in place also names the op that made the
  tensor and the last line that used it before (what anomaly mode would print, without its
  cost: anomaly mode formats a Python traceback for every node of the graph);
- the op that raised: its operands (shape, dtype, device) and the line that made each one;
- module forward hooks (train/eval mode, Dropout/BatchNorm, grad mode at each call, and the
  module whose forward changed a tensor in place);
- optimizer step hooks (the optimizer's parameters, their gradients at the step);
- every ``backward()``: the loss value, the leaves its graph reaches, the gradients left None,
  the gradients it adds to because nothing cleared them.

Loops are sampled: each (line, op) is recorded in full its first :data:`FULL_PER_OP` times,
later calls only run (a ``backward()`` still gives its loss), so training dynamics cost tens
of iterations' recording, not thousands. The recorder never changes what the program does:
its own bookkeeping failing only marks the evidence truncated.

What comes out is plain JSON-able data (validated in the parent as
:class:`~tutor.sandbox.models.Evidence`), the learner's claim like everything else a run says.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import math
import sys
import weakref
from types import FrameType
from typing import Any

from tutor.sandbox import batch_probe
from tutor.sandbox.param_accounting import ParamAccounting
from tutor.sandbox.training_trace import TrainingTrace

Data = dict[str, Any]

MAX_RECORDS = 20_000  # ops kept in memory for provenance; later ops are only counted
MAX_NOTABLE = 150
MAX_BACKWARDS = 300
MAX_STEPS = 300
MAX_MODULE_CALLS = 60
MAX_PARAMS = 150
MAX_CHAIN = 12
MAX_HISTORY = 24
"""Ops kept of an operand's history: a model of a dozen layers (an encoder and a decoder)
between where the batch changed and where it fails."""
MAX_OPERANDS = 8
MAX_SNAPSHOT_NUMEL = 1_000_000
CHAIN_KEYS = ("line", "op", "requires_grad", "grad_fn", "inputs_rg", "grad_enabled", "cut",
              "shape", "dtype", "module", "index", "layer", "layer_kind", "args")
DTYPE_NAMES: dict[Any, str] = {}
"""``torch.float32`` -> "torch.float32", filled on first use (str() of a dtype per op costs)."""


def _dtype_name(dtype: Any) -> str:
    name = DTYPE_NAMES.get(dtype)
    if name is None:
        name = DTYPE_NAMES[dtype] = str(dtype)[:40]
    return name


SHAPE_OPS = frozenset({
    "__getitem__", "view", "reshape", "flatten", "unflatten", "cat", "concat", "concatenate",
    "stack", "hstack", "vstack", "squeeze", "unsqueeze", "permute", "transpose", "movedim",
    "swapaxes", "sum", "mean", "amax", "amin", "max", "min", "argmax", "select", "narrow",
    "expand", "repeat", "split", "chunk", "view_as", "reshape_as", "expand_as", "index_select",
})
"""Ops whose other arguments say which dimensions they keep, drop, merge or join: the
diagnosis of a shape error reads them off the history (where the batch was dropped)."""
CONFIG_KEYS = ("in_features", "out_features", "in_channels", "out_channels", "input_size",
               "hidden_size", "num_layers", "batch_first", "bidirectional", "num_features",
               "num_embeddings", "embedding_dim", "normalized_shape", "kernel_size", "stride",
               "padding", "start_dim", "end_dim", "dim", "embed_dim", "num_heads", "d_model",
               "output_size", "scale_factor")
"""The attributes of a module that hold its sizes (public attributes of torch's layers)."""
FULL_PER_OP = 64
"""Calls of one (line, op) recorded in full; a loop's later iterations only run."""
FULL_STEPS = 30
"""Optimizer steps whose gradients are looked at."""

INPLACE_DUNDERS = frozenset({
    "__iadd__", "__isub__", "__imul__", "__itruediv__", "__ifloordiv__", "__ipow__",
    "__imod__", "__iand__", "__ior__", "__ixor__", "__setitem__", "__imatmul__",
})
TO_PYTHON = frozenset({"item", "tolist", "numpy", "__float__", "__int__", "__bool__",
                       "__index__", "__array__"})
FROM_VALUES = frozenset({"tensor", "as_tensor", "from_numpy", "Tensor", "FloatTensor",
                         "LongTensor", "DoubleTensor", "__new__"})


def _number(value: float) -> float | str:
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value


REORDERING = frozenset({"view", "reshape"})
"""Ops that cut the elements' memory order anew without moving any."""


def merged_sizes(shape: list[int], parts: int) -> list[list[int]]:
    """Every way to merge neighbouring sizes of ``shape`` into ``parts`` sizes."""
    out = []
    for cuts in itertools.combinations(range(1, len(shape)), parts - 1):
        bounds = (0, *cuts, len(shape))
        out.append([math.prod(shape[a:b]) for a, b in itertools.pairwise(bounds)])
    return out


def reorders(before: list[int], after: list[int]) -> bool:
    """A view from ``before`` to ``after`` that only puts the same sizes in another order
    (after merging neighbours, either way): (N, C, H, W) viewed as (N, H*W, C). A view keeps
    the memory order, so this scrambles, where a permute was meant. False where some way to
    merge gives the shape as it is (a flatten, a split), or the sizes that move repeat."""
    for old, new in ((before, after), (after, before)):
        if not 2 <= len(new) <= len(old) <= 6:
            continue
        grouped = merged_sizes(old, len(new))
        if any(g == new for g in grouped):
            return False
        for g in grouped:
            moved = [size for size, seen in zip(new, g, strict=True) if size != seen]
            if sorted(g) == sorted(new) and len(set(moved)) == len(moved) and min(moved) > 1:
                return True
    return False


def _storage(tensor: Any) -> int:
    """Where a tensor's values live (``p`` and ``p.data`` share it): its storage's address,
    else the object's id."""
    try:
        return int(tensor.untyped_storage().data_ptr())
    except Exception:  # a tensor without a plain storage (sparse, a subclass)
        return id(tensor)


def _grad_fn(tensor: Any) -> str | None:
    node = tensor.grad_fn
    return type(node).__name__ if node is not None else None


class Recorder:
    """One instrumented run: :meth:`start` before the learner's code, :meth:`finish` after."""

    def __init__(self, torch: Any, learner_file: str) -> None:
        self.torch = torch
        self.file = learner_file
        self.records: list[Data] = []
        self.origin: dict[int, tuple[weakref.ref[Any], int]] = {}
        self.last_use: dict[int, int] = {}
        self.first_use: dict[int, int] = {}
        self.calls: dict[tuple[int, str], int] = {}
        self.notable: list[Data] = []
        self.backwards: list[Data] = []
        self.steps: list[Data] = []
        self.module_calls: dict[tuple[Any, ...], Data] = {}
        self.module_info: dict[int, tuple[str, str, bool, bool]] = {}
        self.module_paths: dict[int, dict[int, str]] = {}
        self.stack: list[Any] = []
        self.params: dict[int, Data] = {}
        self.param_refs: dict[int, Any] = {}
        self.initial: dict[int, Any] = {}
        self.optimizer_params: set[int] = set()
        self.step_grads: dict[int, list[int]] = {}
        self.given_grad: set[int] = set()
        self.reached: set[int] = set()
        self.reached_at: dict[int, frozenset[int]] = {}
        """The leaves (ids) the last fully recorded pass of each backward() line reached: a
        later pass of that line, not walked, is taken to reach the same ones."""
        self.held_at: dict[int, tuple[frozenset[int], frozenset[int]]] = {}
        """By pass (its index in ``backwards``): the ids of the leaves it reached, and of those
        whose ``.grad`` already held a gradient when it started."""
        self.failed: Data | None = None
        self.failed_exc: BaseException | None = None
        self.in_internal = 0
        self.truncated = False
        self.handles: list[Any] = []
        self.mode: Any = None
        self.aside: list[bool] = []
        """Per optimizer step in progress: whether the mode stood aside for it."""
        self.probe: FrameType | None = None
        self.trace = TrainingTrace(self)
        self.accounting = ParamAccounting(self)
        self.passes = 0
        """backward() calls of the learner's code, all of them (a budget counts them)."""
        self.step_calls = 0
        """Optimizer steps, all of them."""
        self.cut: Data | None = None
        """Where a budget ended the run's training (:mod:`tutor.sandbox.budget`)."""
        self.last_batch: dict[int, tuple[Any, tuple[Any, ...]]] = {}
        """Per top-level module the learner called: the module and its last inputs, for
        :mod:`tutor.sandbox.batch_probe`."""

    # -- where the learner is --------------------------------------------------------
    def _learner_frame(self) -> FrameType | None:
        frame: FrameType | None = sys._getframe(1)
        while frame is not None:
            if frame.f_code.co_filename == self.file:
                return frame
            frame = frame.f_back
        return None

    def _direct(self) -> bool:
        """Whether the op in progress was called by the learner's own line (not by torch's
        Python code, such as ``nn.init`` inside a layer's constructor)."""
        frame: FrameType | None = sys._getframe(1)
        while frame is not None:
            filename = frame.f_code.co_filename
            if filename == self.file:
                return True
            if not (filename == __file__ or filename.endswith("overrides.py")):
                return False
            frame = frame.f_back
        return False

    def _name_of(self, obj: Any, frame: FrameType | None, outermost: bool = False
                 ) -> str | None:
        """The learner's name for ``obj``: a local or global bound to it, or ``self.x``; the
        innermost frame's name, or the outermost's (where a value untracked by the
        provenance was made, e.g. by ``torch.from_numpy``)."""
        found = None
        while frame is not None:
            if frame.f_code.co_filename == self.file:
                name = self._name_in(obj, frame)
                if name is not None:
                    if not outermost:
                        return name
                    found = name
            frame = frame.f_back
        return found

    def _name_in(self, obj: Any, frame: FrameType) -> str | None:
        for scope in (frame.f_locals, frame.f_globals):
            for key, value in list(scope.items()):
                if value is obj and not key.startswith("__"):
                    return key
        owner = frame.f_locals.get("self")
        if owner is not None:
            for key, value in list(getattr(owner, "__dict__", {}).items()):
                if value is obj:
                    return f"self.{key}"
            if isinstance(owner, self.torch.nn.Module):  # its layers live in named_children
                for key, value in owner.named_children():
                    if value is obj:
                        return f"self.{key}"
        return None

    # -- the function mode ------------------------------------------------------------
    def _tensors(self, values: Any) -> list[Any]:
        found = []
        for value in values:
            if isinstance(value, self.torch.Tensor):
                found.append(value)
            elif isinstance(value, (list, tuple)):
                found.extend(v for v in value if isinstance(v, self.torch.Tensor))
        return found

    def _op_name(self, func: Any) -> str:
        name = getattr(func, "__name__", None) or type(func).__name__
        if name in ("__get__", "__set__"):
            owner = getattr(func, "__self__", None)
            name = f"{name[2:5]} {getattr(owner, '__name__', '?')}"
        return str(name)

    def _record_of(self, tensor: Any) -> int | None:
        entry = self.origin.get(id(tensor))
        if entry is not None and entry[0]() is tensor:
            return entry[1]
        return None

    def on_function(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        torch = self.torch
        frame = self._learner_frame() if not self.in_internal else None
        if frame is None:
            return func(*args, **kwargs)
        line = frame.f_lineno
        name = self._op_name(func)
        if name == "backward" or func is torch.autograd.backward:
            return self._backward(func, args, kwargs, line, frame)
        key = (line, name)
        calls = self.calls[key] = self.calls.get(key, 0) + 1
        if calls > FULL_PER_OP:  # a loop's later iterations: run, and only note a failure
            return self._call(func, args, kwargs, line, name, frame)
        try:
            inputs = self._tensors(list(args) + list(kwargs.values()))
            before = self._before(inputs, line)
        except Exception:
            inputs, before = [], None
            self.truncated = True
        result = self._call(func, args, kwargs, line, name, frame)
        if before is not None:
            try:
                self._after(name, inputs, before, args, kwargs, result, line, frame)
            except Exception:  # never the learner's problem (e.g. a no_grad view's grad_fn)
                self.truncated = True
            try:
                self._trace_op(name, inputs, args, kwargs, result, line, frame)
            except Exception:
                self.truncated = True
        return result

    def _trace_op(self, name: str, inputs: list[Any], args: tuple[Any, ...],
                  kwargs: dict[str, Any], result: Any, line: int, frame: FrameType) -> None:
        outputs = result if isinstance(result, (list, tuple)) else [result]
        out = next((o for o in outputs if isinstance(o, self.torch.Tensor)), None)
        index = self._record_of(out) if out is not None else None
        inplace = ((name.endswith("_") and not name.endswith("__")) or name in INPLACE_DUNDERS
                   or kwargs.get("inplace") is True)
        self.trace.on_op(name, inputs, args, kwargs, out, index if index is not None else -1,
                         line, frame, inplace, inputs[0] if inputs else None)
        self.accounting.on_op(name, inputs, line)

    def _call(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any], line: int,
              name: str, frame: FrameType) -> Any:
        try:
            return func(*args, **kwargs)
        except Exception as exc:
            try:
                self._failed(line, name, args, kwargs, frame, exc)
            except Exception:
                self.truncated = True
            raise

    def _before(self, inputs: list[Any], line: int) -> Data:
        target = inputs[0] if inputs else None
        if target is None:
            return {"target": None}
        origin = self._record_of(target)
        return {"target": target, "grad_fn": _grad_fn(target),
                "requires_grad": target.requires_grad, "leaf": target.is_leaf,
                "origin": origin, "used": self.last_use.get(origin) if origin is not None
                else None}

    def _after(self, name: str, inputs: list[Any], before: Data, args: tuple[Any, ...],
               kwargs: dict[str, Any], result: Any, line: int, frame: FrameType) -> None:
        torch = self.torch
        target = before["target"]
        if name.startswith("get "):
            if name == "get data" and target is not None and target.requires_grad:
                self._notable(line, "data", "data", target, frame, "")
                if isinstance(result, torch.Tensor) and len(self.records) < MAX_RECORDS:
                    self.records.append({"line": line, "op": ".data", "inputs": [],
                                         "inputs_rg": True, "grad_enabled": True,
                                         "shape": list(result.shape), "requires_grad": False,
                                         "grad_fn": None, "cut": "data",
                                         "leaves": [_storage(target)]})
                    self.origin[id(result)] = (weakref.ref(result), len(self.records) - 1)
            return
        if name == "set requires_grad" and target is not None:
            used = self.first_use.get(id(target))
            self._notable(line, "requires_grad", "requires_grad", target, frame,
                          f"first used on line {used}" if used is not None and used < line
                          else "", first_use=used)
            return
        if name == "requires_grad_" and target is not None:
            used = self.first_use.get(id(target))
            if used == line:  # its own call counts as a use
                used = None
            self._notable(line, "requires_grad", name, target, frame,
                          f"first used on line {used}" if used is not None else "",
                          first_use=used)
            return
        inputs_rg = any(t.requires_grad for t in inputs)
        if torch.is_grad_enabled():  # a use that autograd records (or would, with the flag)
            for tensor in inputs:
                self.first_use.setdefault(id(tensor), line)
        outputs = result if isinstance(result, (list, tuple)) else [result]
        out = next((o for o in outputs if isinstance(o, torch.Tensor)), None)
        inplace = ((name.endswith("_") and not name.endswith("__")) or name in INPLACE_DUNDERS
                   or kwargs.get("inplace") is True)
        if inplace and target is not None and self.stack and id(target) in self.params:
            # a forward pass overwrote a parameter: never what an optimizer step does
            self.params[id(target)].setdefault("forward_change", line)
        if len(self.records) >= MAX_RECORDS:
            self.truncated = True
            return
        sources = [self._record_of(t) for t in inputs]
        record: Data = {
            "line": line, "op": name, "inputs": sources[:4], "inputs_rg": inputs_rg,
            "grad_enabled": torch.is_grad_enabled(),
            # tensors no recorded op made (parameters, data): what a value was computed from
            "leaves": [_storage(t) for t, made in zip(inputs, sources, strict=False)
                       if made is None and t.is_leaf][:4],
        }
        if self.stack:
            info = self.module_info.get(id(self.stack[0]))
            record["module"] = info[0] if info else None
            layer = self._current_module()
            if layer is not None:
                record["layer"], record["layer_kind"] = layer[0][:120], layer[1][:80]
        if out is not None:
            record.update(shape=list(out.shape), requires_grad=out.requires_grad,
                          grad_fn=_grad_fn(out), dtype=_dtype_name(out.dtype) if all(
                              o.dtype == out.dtype for o in outputs
                              if isinstance(o, torch.Tensor)) else None)
        if name in SHAPE_OPS:
            record["args"] = _args_text(args, kwargs)
        index = record["index"] = len(self.records)
        self.records.append(record)
        for source in sources:
            if source is not None:
                self.last_use[source] = index
        for o in outputs:
            if isinstance(o, torch.Tensor):
                self.origin[id(o)] = (weakref.ref(o), self._sibling(record, o, out))
        if inplace and target is not None and before["requires_grad"] and (
                not before["leaf"] or self._direct()):
            self._inplace(name, target, before, line, frame)
        elif inputs_rg and out is not None and not out.requires_grad:
            reason = "no_grad" if not torch.is_grad_enabled() else "nondifferentiable"
            self._notable(line, "cut", name, out, frame, reason)
            record["cut"] = reason
        elif inputs_rg and out is None and name in TO_PYTHON:
            self._notable(line, "cut", name, target, frame, "python")
        elif name in FROM_VALUES and out is not None and not out.requires_grad:
            record["cut"] = "new"
        if name in REORDERING and out is not None and inputs and isinstance(
                inputs[0], torch.Tensor) and reorders(list(inputs[0].shape), list(out.shape)):
            self._notable(line, "reorder", name, out, frame,
                          f"{list(inputs[0].shape)} -> {list(out.shape)}")

    def _sibling(self, record: Data, tensor: Any, first: Any) -> int:
        """The record index of one output of an op: its own record where the op gave
        several of different shapes (an LSTM's output and hidden state, an uneven split),
        so that a later op on one of them sees that one's shape, not the first's."""
        index: int = record["index"]
        if tensor is first or list(tensor.shape) == record.get("shape") or len(
                self.records) >= MAX_RECORDS:
            return index
        sibling = {**record, "shape": list(tensor.shape), "requires_grad": tensor.requires_grad,
                   "grad_fn": _grad_fn(tensor), "dtype": _dtype_name(tensor.dtype),
                   "index": len(self.records)}
        self.records.append(sibling)
        return len(self.records) - 1

    def _inplace(self, name: str, target: Any, before: Data, line: int,
                 frame: FrameType) -> None:
        """A tensor that requires grad changed in place: what made it, what used it, where."""
        grad_mode = self.torch.is_grad_enabled()
        made = self.records[before["origin"]]["line"] if before["origin"] is not None else None
        used = self.records[before["used"]]["line"] if before["used"] is not None else None
        module = self._current_module()
        if before["grad_fn"]:
            detail = f"modified a tensor made by {before['grad_fn']}"
        elif before["leaf"]:
            detail = "modified a leaf that requires grad"
        else:
            detail = "modified a tensor in place"
        if not grad_mode:
            detail += " under no_grad"
        self._notable(line, "inplace", name, target, frame, detail,
                      grad_fn=before["grad_fn"], grad_fn_after=_grad_fn(target),
                      module=module[0] if module else None,
                      module_kind=module[1] if module else None,
                      made_line=made, used_line=used)

    def _failed(self, line: int, name: str, args: tuple[Any, ...], kwargs: dict[str, Any],
                frame: FrameType, exc: BaseException) -> None:
        """The op that raised: its operands and where each was made (the last one wins)."""
        module = self._current_module()
        self.failed = {"line": line, "op": name[:80],
                       "inputs": self._operands(args, kwargs, frame),
                       "module": module[0] if module else None,
                       "module_kind": module[1] if module else None,
                       "config": self._config(self.stack[-1]) if self.stack else {}}
        self.failed_exc = exc

    def _module_failed(self, module: Any, args: Any) -> None:
        """A module's forward raised where no op of it did: its own check of its input (a
        BatchNorm's or an RNN's dimensions). The innermost such module is the one that
        raised; the modules around it see the same exception pass and are left alone."""
        exc = sys.exc_info()[1]
        if exc is None or exc is self.failed_exc:
            return
        frame = self._learner_frame()
        if frame is None:
            return
        inner = self._current_module()
        self.failed = {"line": frame.f_lineno, "op": "forward",
                       "inputs": self._operands(tuple(args) if isinstance(args, tuple)
                                                else (args,), {}, frame),
                       "module": inner[0] if inner else None,
                       "module_kind": type(module).__name__[:80],
                       "config": self._config(module)}
        self.failed_exc = exc

    def _config(self, module: Any) -> Data:
        """The module's sizes, from its own attributes (never its submodules')."""
        found: Data = {}
        attributes = vars(module)
        for key in CONFIG_KEYS:
            value = attributes.get(key)
            if isinstance(value, (bool, int)) or (isinstance(value, str) and len(value) <= 40):
                found[key] = value
            elif isinstance(value, (tuple, list)) and len(value) <= 8 and all(
                    isinstance(v, int) and not isinstance(v, bool) for v in value):
                found[key] = list(value)
        return found

    def _operands(self, args: tuple[Any, ...], kwargs: dict[str, Any], frame: FrameType
                  ) -> list[Data]:
        operands: list[Data] = []
        named = [(str(i), v) for i, v in enumerate(args)] + list(kwargs.items())
        for arg, value in named:
            values = value if isinstance(value, (list, tuple)) else [value]
            for tensor in values:
                if not isinstance(tensor, self.torch.Tensor) or len(operands) >= MAX_OPERANDS:
                    continue
                origin = self._record_of(tensor)
                made = self.records[origin] if origin is not None else None
                operands.append({
                    "arg": arg[:40], "name": self._name_of(tensor, frame, origin is None),
                    "shape": list(tensor.shape)[:8], "dtype": str(tensor.dtype)[:40],
                    "device": str(tensor.device)[:40], "requires_grad": tensor.requires_grad,
                    "grad_fn": _grad_fn(tensor),
                    "line": made["line"] if made else None,
                    "op": str(made["op"])[:80] if made else None,
                    "history": self._history(origin),
                    **self._bounds(tensor),
                })
        return operands

    def _bounds(self, tensor: Any) -> Data:
        """The smallest and largest value of an integer tensor (class labels, indices)."""
        torch = self.torch
        if tensor.is_floating_point() or tensor.is_complex() or not (
                0 < tensor.numel() <= MAX_SNAPSHOT_NUMEL):
            return {}
        with torch.no_grad():
            return {"low": float(tensor.min()), "high": float(tensor.max())}

    def _notable(self, line: int, kind: str, op: str, tensor: Any, frame: FrameType | None,
                 detail: str, **extra: Any) -> None:
        for entry in self.notable:
            if entry["line"] == line and entry["op"] == op and entry["kind"] == kind:
                entry["count"] += 1
                return
        if len(self.notable) >= MAX_NOTABLE:
            self.truncated = True
            return
        grad_fn = extra.pop("grad_fn", None)
        if grad_fn is None and tensor is not None:
            grad_fn = _grad_fn(tensor)
        self.notable.append({
            "line": line, "kind": kind, "op": op[:80], "detail": detail[:200],
            "name": self._name_of(tensor, frame) if tensor is not None else None,
            "grad_fn": grad_fn, "count": 1,
            "requires_grad": bool(tensor.requires_grad) if tensor is not None else None,
            **extra,
        })

    def _chain(self, tensor: Any) -> list[Data]:
        """The ops that made ``tensor``, newest first: the path back to where its graph was
        cut when there is such a place (depth-first over the inputs), else its first inputs."""

        def is_cut(record: Data) -> bool:
            return bool(record.get("cut") and record["cut"] != "new") or bool(
                record.get("inputs_rg") and record.get("requires_grad") is False)

        start = self._record_of(tensor)
        if start is None:
            return []
        best: list[int] | None = None
        stack: list[tuple[int, list[int]]] = [(start, [start])]
        seen: set[int] = set()
        while stack and len(seen) < 2000:
            index, path = stack.pop()
            if index in seen:
                continue
            seen.add(index)
            record = self.records[index]
            if is_cut(record):
                best = path
                break
            if len(path) < MAX_CHAIN:
                for nxt in reversed([i for i in record["inputs"] if i is not None]):
                    stack.append((nxt, [*path, nxt]))
        if best is None:
            best = []
            walk: int | None = start
            while walk is not None and len(best) < MAX_CHAIN and walk not in best:
                best.append(walk)
                nxt = [i for i in self.records[walk]["inputs"] if i is not None]
                walk = nxt[0] if nxt else None
        return [self._link(self.records[i]) for i in best]

    def _link(self, record: Data) -> Data:
        link = {key: record.get(key) for key in CHAIN_KEYS}
        if isinstance(link["shape"], list):
            link["shape"] = link["shape"][:8]
        return link

    def _history(self, start: int | None) -> list[Data]:
        """The ops that made a record's tensor, newest first, through each op's first input
        (the tensor a method is called on, the first a function is given); it ends where
        that input was not made by the learner's code, rather than follow another input
        whose shape is not the one the op transformed."""
        out: list[Data] = []
        index = start
        while index is not None and len(out) < MAX_HISTORY:
            record = self.records[index]
            out.append(self._link(record))
            first = record["inputs"][0] if record["inputs"] else None
            index = first if first is not None and first < index else None
        return out

    def _leaves(self, tensor: Any) -> list[Any]:
        leaves: list[Any] = []
        node = tensor.grad_fn
        if node is None:
            return [tensor] if tensor.requires_grad else []
        stack, seen = [node], set[int]()
        while stack and len(seen) < 20_000:
            node = stack.pop()
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            variable = getattr(node, "variable", None)
            if isinstance(variable, self.torch.Tensor):
                leaves.append(variable)
            stack.extend(next_node for next_node, _ in node.next_functions)
        return leaves

    def _watch(self, tensor: Any, name: str | None) -> None:
        key = id(tensor)
        if key not in self.params and len(self.params) < MAX_PARAMS:
            self.params[key] = {"name": name or "?", "shape": list(tensor.shape)}
            self.param_refs[key] = tensor
            if tensor.numel() <= MAX_SNAPSHOT_NUMEL:
                self.in_internal += 1
                try:
                    with self.torch.no_grad():
                        self.initial[key] = tensor.detach().clone()
                finally:
                    self.in_internal -= 1
        elif key in self.params and self.params[key]["name"] == "?" and name:
            self.params[key]["name"] = name

    def _backward(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any], line: int,
                  frame: FrameType) -> Any:
        torch = self.torch
        tensor = args[0] if args and isinstance(args[0], torch.Tensor) else None
        key = (line, "backward")
        calls = self.calls[key] = self.calls.get(key, 0) + 1
        self.passes += 1
        entry: Data = {"line": line, "loss": None, "shape": None, "requires_grad": None,
                       "grad_fn": None, "reached": [], "chain": [], "raised": None}
        leaves: list[Any] = []
        self.in_internal += 1
        try:
            if tensor is not None:
                if tensor.numel() == 1:
                    with torch.no_grad():
                        entry["loss"] = _number(float(tensor.detach().reshape(()).item()))
                if calls <= FULL_PER_OP:
                    leaves = self._backward_evidence(entry, tensor, line, frame)
        except Exception:
            self.truncated = True
        finally:
            self.in_internal -= 1
        if len(self.backwards) < MAX_BACKWARDS:
            self.backwards.append(entry)
        else:
            self.truncated = True
        self.in_internal += 1
        try:
            result = func(*args, **kwargs)
        except BaseException as exc:
            entry["raised"] = type(exc).__name__
            if not entry["chain"] and tensor is not None:
                try:
                    entry["chain"] = self._chain(tensor)
                except Exception:
                    self.truncated = True
            raise
        finally:
            self.in_internal -= 1
        if leaves:
            entry["grads_none"] = sorted({self.params[id(leaf)]["name"] for leaf in leaves
                                          if id(leaf) in self.params and leaf.grad is None})[:20]
            self.reached_at[line] = frozenset(id(leaf) for leaf in leaves)
            # a gradient backward() gave: one no step finds was cleared before it
            self.given_grad.update(id(leaf) for leaf in leaves if leaf.grad is not None)
        try:
            self.trace.after_backward(self.reached_at.get(line, frozenset())
                                      if calls > FULL_PER_OP else
                                      frozenset(id(leaf) for leaf in leaves))
        except Exception:
            self.truncated = True
        return result

    def _backward_evidence(self, entry: Data, tensor: Any, line: int,
                           frame: FrameType) -> list[Any]:
        entry.update(shape=list(tensor.shape), requires_grad=tensor.requires_grad,
                     grad_fn=_grad_fn(tensor), name=self._name_of(tensor, frame))
        if not any(b["line"] == line for b in self.backwards):
            entry["chain"] = self._chain(tensor)
        leaves = self._leaves(tensor)
        with self.torch.no_grad():
            held = frozenset(id(leaf) for leaf in leaves if leaf.grad is not None
                             and bool(leaf.grad.any()))
        entry["accumulated"] = len(held)
        if len(self.backwards) < MAX_BACKWARDS:
            self.held_at[len(self.backwards)] = (frozenset(id(leaf) for leaf in leaves), held)
        for leaf in leaves:
            self.reached.add(id(leaf))
            self._watch(leaf, self._name_of(leaf, frame))
        if entry["chain"] or len(self.backwards) < 3:
            entry["reached"] = sorted({self.params[id(leaf)]["name"] for leaf in leaves
                                       if id(leaf) in self.params})[:20]
        return leaves

    # -- module and optimizer hooks -------------------------------------------------------
    def _module_pre(self, module: Any, args: Any) -> None:
        self.stack.append(module)
        if self.in_internal:
            return
        self.in_internal += 1
        try:
            if len(self.stack) == 1:
                self._module_call(module, args)
                if isinstance(args, tuple) and args and isinstance(args[0], self.torch.Tensor) \
                        and args[0].dim() >= 2 and args[0].shape[0] >= batch_probe.LEAST_BATCH:
                    self.last_batch.pop(id(module), None)
                    self.last_batch[id(module)] = (module, args)
            self.trace.module_pre(module, args)
        except Exception:
            self.truncated = True
        finally:
            self.in_internal -= 1

    def _module_call(self, module: Any, args: Any = ()) -> None:
        frame = self._learner_frame()
        if frame is None:
            return
        info = self.module_info.get(id(module))
        if info is None:
            name = self._name_of(module, frame) or type(module).__name__
            for pname, param in module.named_parameters():
                self._watch(param, f"{name}.{pname}")
            self.trace.registered(module, name)
            self.accounting.scan(module, name)
            nn = self.torch.nn
            dropout = any(isinstance(m, (nn.Dropout, nn.Dropout1d, nn.Dropout2d, nn.Dropout3d,
                                         nn.AlphaDropout)) and getattr(m, "p", 0) > 0
                          for m in module.modules())
            batchnorm = any(isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d))
                            for m in module.modules())
            info = self.module_info[id(module)] = (name, type(module).__name__, dropout,
                                                   batchnorm)
        name, kind, dropout, batchnorm = info
        self.accounting.on_call(module, frame)
        key = (frame.f_lineno, name, module.training, self.torch.is_grad_enabled())
        if key in self.module_calls:
            self.module_calls[key]["count"] += 1
        elif len(self.module_calls) < MAX_MODULE_CALLS:
            self.module_calls[key] = {
                "line": frame.f_lineno, "module": name[:80], "kind": kind[:80],
                "training": module.training, "grad_enabled": self.torch.is_grad_enabled(),
                "dropout": dropout, "batchnorm": batchnorm, "count": 1,
                "after_backward": bool(self.backwards), "backward": 0,
                "inputs": self._input_facts(args),
            }

    def _input_facts(self, args: Any) -> Data | None:
        """The spread of a module call's first input, when it is a floating tensor: what the
        model is shown at training and at prediction can be compared."""
        first = args[0] if isinstance(args, tuple) and args else None
        torch = self.torch
        if not isinstance(first, torch.Tensor) or not first.is_floating_point() or not (
                1 < first.numel() <= MAX_SNAPSHOT_NUMEL):
            return None
        with torch.no_grad():
            values = first.detach().float()
            if not bool(torch.isfinite(values).all()):
                return None
            return {"mean": float(values.mean()), "std": float(values.std()),
                    "low": float(values.min()), "high": float(values.max())}

    def _current_module(self) -> tuple[str, str] | None:
        """The learner's name and the class of the module whose forward runs now."""
        if not self.stack:
            return None
        inner, top = self.stack[-1], self.stack[0]
        info = self.module_info.get(id(top))
        top_name = info[0] if info else type(top).__name__
        if inner is top:
            return top_name, type(inner).__name__
        paths = self.module_paths.get(id(top))
        if paths is None:
            paths = self.module_paths[id(top)] = {
                id(sub): f"{top_name}.{path}" for path, sub in top.named_modules() if path}
        return paths.get(id(inner), top_name), type(inner).__name__

    def _module_post(self, module: Any, args: Any, output: Any) -> None:
        if not self.in_internal:
            self.in_internal += 1
            try:
                if output is None and sys.exc_info()[1] is not None:
                    self._module_failed(module, args)  # called while its exception passes
                self.trace.module_post(module, output)
            except Exception:
                self.truncated = True
            finally:
                self.in_internal -= 1
        if self.stack:
            self.stack.pop()

    def _parameter(self, module: Any, name: str, param: Any) -> None:
        try:
            self.accounting.on_parameter(module, name, param)
        except Exception:
            self.truncated = True

    def _step_pre(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        self.in_internal += 1  # until the step's post hook: its own updates are not the learner's
        self.step_calls += 1
        # None of the step's own ops is recorded: the mode steps aside until the post hook
        # (an Adam step is ~10 ops a parameter: most of what a training loop's recording
        # cost), when it is the innermost mode (a learner's own mode stays as it was)
        aside = self._innermost()
        if aside:
            self.mode.__exit__(None, None, None)
        self.aside.append(aside)
        try:
            self.trace.rate_seen(optimizer)
        except Exception:
            self.truncated = True
        if len(self.steps) >= FULL_STEPS:
            return
        try:
            self._step(optimizer)
        except Exception:
            self.truncated = True

    def _step(self, optimizer: Any) -> None:
        frame = self._learner_frame()
        params = [p for group in optimizer.param_groups for p in group["params"]]
        name = self._name_of(optimizer, frame) if frame is not None else None
        names = []
        for param in params:
            self.optimizer_params.add(id(param))
            self._watch(param, self._name_of(param, frame) if id(param) not in self.params
                        else None)
            names.append(self.params[id(param)]["name"] if id(param) in self.params else "?")
        for param in params:  # [steps that held it, those that found it a gradient]
            seen = self.step_grads.setdefault(id(param), [0, 0])
            seen[0] += 1
            seen[1] += param.grad is not None
        grads_none = sum(1 for p in params if p.grad is None)
        with self.torch.no_grad():
            grads_zero = sum(1 for p in params if p.grad is not None and not bool(p.grad.any()))
        lr = optimizer.param_groups[0].get("lr") if optimizer.param_groups else None
        entry: Data = {
            "line": frame.f_lineno if frame is not None else None,
            "optimizer": (name or type(optimizer).__name__)[:80],
            "where": str(getattr(frame.f_code, "co_qualname", frame.f_code.co_name))[:80]
            if frame is not None else None,
            "kind": type(optimizer).__name__, "params": sorted(set(names))[:20],
            "n_params": len(params), "grads_none": grads_none, "grads_zero": grads_zero,
            "lr": float(lr) if isinstance(lr, (int, float)) else None,
            "after_backward": len(self.backwards),
        }
        self.steps.append(entry)
        self.trace.before_step(optimizer, params, entry)

    def _step_post(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        try:
            self.trace.after_step()
        except Exception:
            self.truncated = True
        if self.aside and self.aside.pop():
            self.mode.__enter__()
        self.in_internal = max(0, self.in_internal - 1)

    def cut_at(self, line: int) -> None:
        """A budget ended the loop of ``line``: the evidence holds what came before (and
        what the code after the loop did), not the rest of the training."""
        if self.cut is None:
            self.cut = {"line": line, "backwards": self.passes, "steps": self.step_calls}
            self.truncated = True

    def _innermost(self) -> bool:
        """Whether our mode is the innermost one now: a factory call reaches it straight
        from this frame only then (an inner mode of the learner's would pass it on from its
        own ``__torch_function__``). False while it stands aside (a step inside a step)."""
        if any(self.aside):
            return False
        self.probe = sys._getframe()
        try:
            self.torch.empty(0)
            return self.probe is None
        finally:
            self.probe = None

    # -- life cycle -----------------------------------------------------------------------
    def start(self) -> None:
        torch = self.torch
        recorder = self

        class Mode(torch.overrides.TorchFunctionMode):  # type: ignore[name-defined]
            def __torch_function__(self, func: Any, types: Any, args: tuple[Any, ...] = (),
                                   kwargs: dict[str, Any] | None = None) -> Any:
                if recorder.probe is not None and sys._getframe(1) is recorder.probe:
                    recorder.probe = None  # reached straight from the probe: innermost
                return recorder.on_function(func, args, kwargs or {})

        import torch.optim.optimizer as optimizer_hooks

        module_hooks = torch.nn.modules.module
        self.handles = [
            module_hooks.register_module_forward_pre_hook(self._module_pre),
            module_hooks.register_module_forward_hook(self._module_post, always_call=True),
            optimizer_hooks.register_optimizer_step_pre_hook(self._step_pre),
            optimizer_hooks.register_optimizer_step_post_hook(self._step_post),
            module_hooks.register_module_parameter_registration_hook(self._parameter),
        ]
        self.mode = Mode()
        self.mode.__enter__()

    def finish(self, namespace: dict[str, Any], *, finished: bool = True) -> Data:
        """Stop watching and return the evidence as plain data."""
        torch = self.torch
        try:
            if not any(self.aside):  # (a step that raised left it aside)
                self.mode.__exit__(None, None, None)
        except Exception:  # the learner's code left the mode stack in another state
            self.truncated = True
        for handle in self.handles:
            handle.remove()
        # only a run that ended well: the probe serves silent bugs, and a model that raised
        # or ran out of time or memory would only do it again
        batch_mixing = self._batch_mixing() if finished else []
        for global_name, value in list(namespace.items()):
            if global_name.startswith("__"):
                continue
            if isinstance(value, torch.nn.Module):
                for pname, param in value.named_parameters():
                    if id(param) in self.params:
                        self.params[id(param)].setdefault("global", f"{global_name}.{pname}")
                    else:
                        self._watch(param, f"{global_name}.{pname}")
            elif isinstance(value, torch.Tensor) and value.is_leaf and value.requires_grad:
                self._watch(value, global_name)
        params = []
        for key, info in self.params.items():
            tensor = self.param_refs[key]
            start = self.initial.get(key)
            changed = None
            if start is not None and start.shape == tensor.shape:
                with torch.no_grad():
                    changed = not bool(torch.equal(start, tensor.detach()))
            try:
                facts = {**self.trace.param_facts(key, tensor, start),
                         **self.accounting.param_facts(key)}
            except Exception:
                facts, self.truncated = {}, True
            params.append({
                "name": str(info.get("global") or info["name"])[:120],
                "shape": info["shape"][:8], "requires_grad": bool(tensor.requires_grad),
                "changed": changed, "grad_none": tensor.grad is None,
                "in_optimizer": key in self.optimizer_params, "reached": key in self.reached,
                "forward_change": info.get("forward_change"),
                "steps_without_grad": (seen := self.step_grads.get(key, [0, 1]))[0] > 0
                and seen[1] == 0 and key in self.given_grad,
                **facts,
            })
        for key_, count in self.trace.trained_calls.items():
            if key_ in self.module_calls:
                self.module_calls[key_]["backward"] = count
        try:
            training = self.trace.finish()
        except Exception:
            training, self.truncated = {}, True
        try:
            accounting = self.accounting.finish(namespace)
        except Exception:
            accounting, self.truncated = {}, True
        return {
            "ops": self.notable, "backwards": self.backwards, "steps": self.steps,
            "modules": list(self.module_calls.values()), "params": params,
            "failed": self.failed, "truncated": self.truncated, "training": training,
            "accounting": accounting, "cut": self.cut, "batch_mixing": batch_mixing,
        }

    def _batch_mixing(self) -> list[Data]:
        """The batch probe of the last two top-level modules called (the model, and a
        second one such as a target network); the run's own results are all in by now."""
        found = []
        for module, args in list(self.last_batch.values())[-2:]:
            try:  # what the model prints again is not the program's output
                with contextlib.redirect_stdout(io.StringIO()), \
                        contextlib.redirect_stderr(io.StringIO()):
                    mixed = batch_probe.probe(self.torch, module, args, self.file)
            except Exception:
                mixed = None
            if mixed is not None:
                info = self.module_info.get(id(module))
                found.append({"module": (info[0] if info else type(module).__name__)[:80],
                              **mixed})
        self.last_batch.clear()
        return found


def _args_text(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    """A shape op's arguments that are not tensors, as Python writes them: ``0`` for
    ``x[0]``, ``:, -1`` for ``x[:, -1]``, ``-1, 4`` for ``x.view(-1, 4)``, ``dim=1``."""
    shown = [_arg_text(a) for a in args[1:]] + [f"{k}={_arg_text(v)}" for k, v in kwargs.items()]
    return ", ".join(s for s in shown if s is not None)[:80]


def _arg_text(value: Any) -> str | None:
    if value is None or isinstance(value, (bool, int, float, str)):
        return repr(value)
    if value is Ellipsis:
        return "..."
    if isinstance(value, slice):
        parts = ["" if v is None else repr(v) for v in (value.start, value.stop, value.step)]
        return ":".join(parts[:2] if value.step is None else parts)
    if isinstance(value, (tuple, list)):
        items = [_arg_text(v) for v in value]
        if all(i == "tensor" for i in items):
            return None  # the tensors a cat or stack joins: the history has them
        inner = ", ".join(i if i is not None else "?" for i in items)
        return inner if isinstance(value, tuple) else f"[{inner}]"
    if type(value).__name__ in ("Tensor", "Parameter") or hasattr(value, "shape"):
        return "tensor"
    if type(value).__name__ in ("Size", "dtype", "device", "memory_format"):
        return str(value)
    return "?"


def start(torch: Any, learner_file: str) -> Recorder:
    recorder = Recorder(torch, learner_file)
    recorder.start()
    return recorder

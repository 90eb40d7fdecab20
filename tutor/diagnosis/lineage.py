"""A tensor's lineage: the ops of the learner's code that made it, oldest first, as the
instrumented re-run recorded them (each op's output shape, the arguments of a shape op, the
layer it ran in), and the questions shape provenance asks of it: which op took the batch
dimension away, where a size first appeared, where two tensors parted from one another.

The history follows each op's first input (:meth:`tutor.sandbox.evidence.Recorder._history`),
so the shape before a step is the shape of the step before it.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import cached_property

from tutor.diagnosis.flow import Flow, call_name, text
from tutor.sandbox.models import ChainLink, OperandEvidence

MAX_HISTORY = 24  # tutor.sandbox.evidence.MAX_HISTORY: a longer history was cut there

UNBATCHED_RANK = {"conv1d": 2, "conv2d": 3, "conv3d": 4, "conv_transpose1d": 2,
                  "conv_transpose2d": 3, "conv_transpose3d": 4, "max_pool1d": 2,
                  "max_pool2d": 3, "max_pool3d": 4, "avg_pool1d": 2, "avg_pool2d": 3,
                  "avg_pool3d": 4}
"""The rank at which these ops read their input as one sample without a batch dimension."""
JOINS = frozenset({"cat", "concat", "concatenate", "stack", "hstack", "vstack"})
MERGES = frozenset({"view", "reshape", "flatten"})
REDUCTIONS = frozenset({"sum", "mean", "amax", "amin", "max", "min", "argmax"})
INDEXES = frozenset({"__getitem__", "select"})
SQUEEZES = frozenset({"squeeze"})


def product(sizes: list[int] | tuple[int, ...]) -> int:
    out = 1
    for size in sizes:
        out *= size
    return out


def shape_text(shape: list[int] | tuple[int, ...]) -> str:
    """A shape as the catalog writes every shape: (4, 10), (10,), ()."""
    return str(tuple(shape))


@dataclass(frozen=True)
class Step:
    """One op of a lineage and the shape of the tensor it was given (None where the lineage
    starts: a tensor made from values, or given by code the run does not record)."""

    link: ChainLink
    before: list[int] | None

    @property
    def shape(self) -> list[int]:
        return self.link.shape or []

    @property
    def op(self) -> str:
        return self.link.op

    @property
    def line(self) -> int:
        return self.link.line

    def arg_parts(self) -> list[str]:
        """The op's recorded arguments, split at the top level: ``['0', '-1']``."""
        return split_args(self.link.args or "")

    def dim_arg(self) -> int | None:
        """The dimension a join, reduction or squeeze works on (``dim=`` or the first
        positional integer); None where the op was given none."""
        for part in self.arg_parts():
            key, _, value = part.partition("=")
            if value and key.strip() == "dim" and _int(value) is not None:
                return _int(value)
            if not value and _int(part) is not None:
                return _int(part)
        return None

    def node(self, flow: Flow) -> ast.expr | None:
        """The expression on the step's line that is its op: the subscript with the
        recorded index, the call of the recorded method or function (with the recorded
        arguments, where the line has several)."""
        spanning = [s for s in flow.statements
                    if s.lineno <= self.line <= (s.end_lineno or s.lineno)]
        stmt = spanning[-1] if spanning else None
        if stmt is None:
            return None
        wanted = _plain(self.link.args or "")
        subscripts, calls = [], []
        for node in ast.walk(stmt):
            if self.op in INDEXES and isinstance(node, ast.Subscript):
                subscripts.append(node)
            elif isinstance(node, ast.Call) and call_name(node) == self.op:
                calls.append(node)
        if len(subscripts) > 1 or self.link.args is not None:
            # the run wrote the values (``0:8``); the source may name them (``i:i + 8``):
            # the same text, else the same form (a slice, or an index) if only one has it
            same = [n for n in subscripts if _plain(text(n.slice)) == wanted]
            form = [n for n in subscripts if _form(n.slice) == _form_of(wanted)]
            subscripts = same or (form if len(form) == 1 else [])
        if len(calls) > 1 and self.link.args is not None:
            calls = [c for c in calls if wanted in _arg_forms(c)]
        found = subscripts + calls
        if len(found) > 1:
            found = [n for n in found if n.lineno == self.line]
        return found[0] if len(found) == 1 else None

    def slices_dim0(self) -> bool:
        """A slice of dimension 0 (``x[8:12]``): a mini-batch taken from the data, a new
        batch rather than a lost one."""
        parts = self.arg_parts()
        return self.op == "__getitem__" and bool(parts) and ":" in parts[0]

    def drops_dim0(self) -> bool:
        """An index that picks one entry of dimension 0 (``x[0]``, ``x[i, :]``)."""
        parts = self.arg_parts()
        if self.op == "select":
            return bool(parts) and _int(parts[0]) == 0
        return self.op in INDEXES and bool(parts) and _int(parts[0]) is not None and (
            self.before is not None and len(self.shape) < len(self.before))


def split_args(text: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for char in text:
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        if char == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += char
    if current.strip():
        parts.append(current.strip())
    return parts


def _form(index: ast.expr) -> tuple[bool, ...]:
    """Which parts of an index are slices: ``x[i:i + 8]`` -> (True,), ``x[:, -1]`` ->
    (True, False)."""
    parts = index.elts if isinstance(index, ast.Tuple) else [index]
    return tuple(isinstance(p, ast.Slice) for p in parts)


def _form_of(args: str) -> tuple[bool, ...]:
    return tuple(":" in part for part in split_args(args))


def _arg_forms(call: ast.Call) -> tuple[str, str]:
    """A call's arguments as the recorder writes them (without the tensor it was given
    first, and without tensors in a list), for a method call and a function call."""
    args = [text(a) for a in call.args if not isinstance(a, (ast.Tuple, ast.List))]
    keywords = [f"{k.arg}={text(k.value)}" for k in call.keywords]
    return _plain(", ".join(args + keywords)), _plain(", ".join(args[1:] + keywords))


def _plain(source: str) -> str:
    return re.sub(r"\s+", "", source).strip("()")


def _int(source: str) -> int | None:
    return int(source) if re.fullmatch(r"-?\d+", source.strip()) else None


class Lineage:
    """The ops that made one operand, oldest first."""

    def __init__(self, operand: OperandEvidence) -> None:
        self.operand = operand
        links = list(reversed(operand.history))
        self.steps = [Step(link, links[i - 1].shape if i else None)
                      for i, link in enumerate(links)]

    @property
    def shape(self) -> list[int]:
        return self.operand.shape

    @property
    def complete(self) -> bool:
        """The history reaches where the tensor started (it was not cut at its length)."""
        return len(self.operand.history) < MAX_HISTORY

    @cached_property
    def indexes(self) -> dict[int, int]:
        """Record index -> position in :attr:`steps`."""
        return {s.link.index: n for n, s in enumerate(self.steps) if s.link.index is not None}

    def data_batch(self) -> int | None:
        """The batch the data carried: dimension 0 of the tensor given to the model (where
        the lineage enters a module's forward), else of the oldest tensor of two or more
        dimensions in the lineage (images, token ids, features as they were made)."""
        entry = self.entry()
        if entry is not None and entry.before is not None and len(entry.before) >= 2:
            return entry.before[0]
        for step in self.steps:
            if len(step.shape) >= 2:
                return step.shape[0]
        return None

    def batch_kept(self) -> bool:
        """Dimension 0 of the operand is the batch it was made with: an older tensor of the
        lineage had more dimensions and the same dimension 0 (each sample was flattened or
        pooled, the samples kept apart), and the data went into the model as a batch."""
        shape = self.shape
        if not shape or self.entered_unbatched():
            return False
        return any(len(s.shape) > len(shape) and s.shape[0] == shape[0] for s in self.steps)

    def entered_unbatched(self) -> bool:
        """The first layer of the lineage ran its input as one sample without a batch
        dimension (a 3-D image into a 2-D convolution): dimension 0 after it is no batch."""
        entry = self.entry()
        return entry is not None and entry.before is not None and UNBATCHED_RANK.get(
            entry.op) == len(entry.before)

    def lost(self, batch: int) -> list[Step]:
        """The ops that took dimension 0 away from ``batch``: the first whose input had it
        and whose output no longer has it (an index, a flatten or view across it, a join
        along it, a reduction over it, a squeeze of a batch of one), then each later op that
        joined or merged along the dimension that now holds it. Empty when the operand still
        has the batch in dimension 0, or the lineage never had it."""
        if self.shape and self.shape[0] == batch and not any(
                s.drops_dim0() for s in self.steps):
            return []
        found: list[Step] = []
        for step in self.steps:
            before, shape = step.before, step.shape
            if found:
                if len(shape) >= 2 and shape[0] == batch and not step.drops_dim0():
                    found = []  # a later op gave the batch back its own dimension
                elif step.op in JOINS | MERGES and shape and before and shape[0] != before[0]:
                    found.append(step)
                continue
            if before and before[0] == batch and not step.slices_dim0() and (
                    step.drops_dim0() or not shape or shape[0] != batch):
                found.append(step)
        return found

    def origin(self, dim: int, size: int) -> Step | None:
        """The op whose output first has ``size`` at ``dim`` (counted from the end when
        negative) in the line of ops that kept it there up to the operand: where that size
        came from (a layer's out_features, a join, a tensor made with it)."""
        found = None
        for step in reversed(self.steps):
            shape = step.shape
            if not shape or not -len(shape) <= dim < len(shape) or shape[dim] != size:
                break
            found = step
        return found

    def entry(self) -> Step | None:
        """The oldest op that ran inside a module's forward: where the data went in."""
        return next((s for s in self.steps if s.link.module), None)

    def start(self) -> Step | None:
        """The oldest op of the lineage, where it reaches back to the tensor's making."""
        return self.steps[0] if self.steps and self.complete else None

    def path_from(self, index: int) -> list[Step] | None:
        """The ops after the record ``index`` (a tensor of another lineage) up to this
        operand, when this operand was computed from it; None when it was not."""
        at = self.indexes.get(index)
        return self.steps[at + 1:] if at is not None else None

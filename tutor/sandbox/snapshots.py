"""Snapshots of values in a run's process: tensors, plain values and autograd graphs.

Runs inside the forked child (torch is already imported there). Everything produced is
plain JSON data of the shape of the models in :mod:`tutor.sandbox.models`, which the parent
validates it into. The child builds no models itself: pydantic's first touches in a fresh
fork cost ~1.5 ms of copy-on-write faults a run.
"""

from __future__ import annotations

import math
import warnings
from collections import deque
from typing import Any

Data = dict[str, Any]
"""The JSON of one model of :mod:`tutor.sandbox.models` (named in each function's doc)."""

MAX_VALUES = 4096
"""Tensors with more elements than this travel without their values."""
MAX_REPR = 2000
MAX_GRAPH_NODES = 200
MAX_PLAIN_ITEMS = 1000
MAX_INT_BITS = 4096
"""A larger Python int travels as its repr only (which says that it is too long to print)."""


def _scalar(value: Any) -> Any:
    """One element made strict-JSON safe: non-finite floats become strings."""
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return value
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return value
    return str(value)  # complex and anything unusual: readable, still JSON


def _nested(value: Any) -> Any:
    if isinstance(value, list):
        return [_nested(item) for item in value]
    return _scalar(value)


def tensor_class(value: Any) -> str:
    """The exact class of a tensor-like value: ``type()``, which a ``__class__`` property
    cannot change; a subclass is named as one, whatever its ``__qualname__`` says."""
    import torch

    cls = type(value)
    if cls is torch.Tensor:
        return "torch.Tensor"
    if cls is torch.nn.Parameter:
        return "torch.nn.parameter.Parameter"
    return f"subclass:{getattr(cls, '__module__', '?')}.{getattr(cls, '__qualname__', '?')}"


def tensor_snapshot(tensor: Any, *, with_grad: bool = True) -> Data:
    """A :class:`~tutor.sandbox.models.TensorSnapshot`."""
    import torch

    values: Any = None
    truncated = False
    numel = int(tensor.numel())
    if numel > MAX_VALUES:
        truncated = True
    else:
        try:
            if tensor.is_sparse:
                tensor = tensor.to_dense()
            values = _nested(tensor.detach().cpu().tolist())
        except Exception:  # meta tensors, quantized, exotic layouts: keep the metadata
            values, truncated = None, True
    grad = None
    if with_grad and tensor.is_leaf:
        # Only leaves: reading .grad of a non-leaf warns, and that warning is ours, not theirs.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            raw_grad = tensor.grad
        if isinstance(raw_grad, torch.Tensor):
            grad = tensor_snapshot(raw_grad, with_grad=False)
    return {
        "kind": "tensor",
        "type": tensor_class(tensor),
        "shape": [int(size) for size in tensor.shape],
        "dtype": str(tensor.dtype),
        "device": str(tensor.device),
        "requires_grad": bool(tensor.requires_grad),
        "is_leaf": bool(tensor.is_leaf),
        "grad_fn": type(tensor.grad_fn).__name__ if tensor.grad_fn is not None else None,
        "numel": numel,
        "values": values,
        "truncated": truncated,
        "grad": grad,
    }


def _plain(value: Any, budget: list[int]) -> Any:
    """A JSON value for plain Python data, or raises ValueError when it is not plain."""
    budget[0] -= 1
    if budget[0] < 0:
        raise ValueError("too large")
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > MAX_INT_BITS:
        raise ValueError("too large")  # JSON could not even write it (int_max_str_digits)
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return _scalar(value)
    if isinstance(value, (list, tuple)):  # torch.Size is a tuple
        return [_plain(item, budget) for item in value]
    if isinstance(value, dict) and all(isinstance(key, str) for key in value):
        return {key: _plain(item, budget) for key, item in value.items()}
    raise ValueError("not plain")


def snapshot(value: Any) -> Data:
    """A :class:`~tutor.sandbox.models.TensorSnapshot` or
    :class:`~tutor.sandbox.models.ValueSnapshot`."""
    import torch

    if isinstance(value, torch.Tensor):
        return tensor_snapshot(value)
    try:
        text = repr(value)
    except Exception as exc:  # a learner's __repr__ may raise
        text = f"<repr failed: {type(exc).__name__}>"
    if len(text) > MAX_REPR:
        text = text[:MAX_REPR] + "…"
    try:
        plain = _plain(value, [MAX_PLAIN_ITEMS])
    except (ValueError, RecursionError):
        plain = None
    if isinstance(value, (torch.device, torch.dtype)):
        plain = str(value)
    return {"kind": "value", "type": type(value).__name__, "repr": text, "value": plain}


def tensor_names(namespace: dict[str, Any]) -> dict[int, str]:
    """id(tensor) → the learner's name for it (first name wins; dunder names skipped)."""
    import torch

    names: dict[int, str] = {}
    for name, value in namespace.items():
        if not name.startswith("__") and isinstance(value, torch.Tensor):
            names.setdefault(id(value), name)
    return names


def graph(value: Any, namespace: dict[str, Any]) -> Data:
    """The autograd graph behind ``value`` (a :class:`~tutor.sandbox.models.Graph`):
    breadth-first over grad_fn/next_functions."""
    import torch

    root_fn = value.grad_fn if isinstance(value, torch.Tensor) else None
    if root_fn is None:
        return {"root": None, "nodes": [], "truncated": False}
    names = tensor_names(namespace)
    ids: dict[int, int] = {}
    order: list[Any] = []
    queue: deque[Any] = deque([root_fn])
    ids[id(root_fn)] = 0
    order.append(root_fn)
    truncated = False
    links: dict[int, list[int]] = {}
    while queue:
        fn = queue.popleft()
        targets: list[int] = []
        for next_fn, _ in getattr(fn, "next_functions", ()):
            if next_fn is None:
                continue
            if id(next_fn) not in ids:
                if len(order) >= MAX_GRAPH_NODES:
                    truncated = True
                    continue
                ids[id(next_fn)] = len(order)
                order.append(next_fn)
                queue.append(next_fn)
            targets.append(ids[id(next_fn)])
        links[ids[id(fn)]] = targets
    nodes = []
    for index, fn in enumerate(order):
        leaf_shape = leaf_name = None
        variable = getattr(fn, "variable", None)
        if isinstance(variable, torch.Tensor):
            leaf_shape = [int(size) for size in variable.shape]
            leaf_name = names.get(id(variable))
        nodes.append({
            "id": index,
            "name": type(fn).__name__,
            "next": links.get(index, []),
            "leaf_shape": leaf_shape,
            "leaf_name": leaf_name,
        })
    return {"root": 0, "nodes": nodes, "truncated": truncated}

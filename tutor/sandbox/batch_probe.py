"""Whether a model's output for one sample depends on the other samples of its batch.

After the learner's program ran, the last batch each top-level module was called with is
given to it again, in eval mode and without gradients: whole, and then its second half
alone. A model whose samples are independent gives that half the same rows both times; one
that mixes them (a softmax or a mean over dimension 0, a recurrent layer reading the batch
as time, a ``view`` that interleaves samples) does not. The first operation of the learner's
lines whose output changes that way is where the samples are mixed. Runs in the child, after
the recorder stopped watching; its report is only ever the learner's claim.
"""

from __future__ import annotations

import sys
from typing import Any

Data = dict[str, Any]

MAX_OPS = 400
"""Operations compared per pass at most."""
LEAST_BATCH = 4
"""Samples a batch needs for its halves to say anything."""


def probe(torch: Any, module: Any, args: tuple[Any, ...], learner_file: str) -> Data | None:
    """What the probe found for ``module`` called with ``args``: None where its samples are
    independent, or where the probe cannot tell (other inputs, randomness, an error)."""
    if not args or not isinstance(args[0], torch.Tensor) or args[0].dim() < 2:
        return None
    batch = args[0].shape[0]
    # the tensors of the batch are halved; the others (a recurrent state of shape (layers,
    # batch, hidden), positions of shape (1, tokens, d), a flag) are given as they were
    halved = [isinstance(a, torch.Tensor) and a.dim() >= 1 and a.shape[0] == batch
              for a in args]
    if batch < LEAST_BATCH or any(
            isinstance(a, (list, tuple)) and len(a) == batch for a in args):
        return None  # per-sample values the probe cannot halve (a list of lengths)
    if any(h and a.is_floating_point() is False and a.dtype != torch.long
           for a, h in zip(args, halved, strict=True)):
        return None
    half = batch // 2
    was_training = module.training
    try:
        module.eval()
        with torch.no_grad():
            whole, whole_ops = _run(torch, module, args, learner_file)
            again, _ = _run(torch, module, args, learner_file)
            if whole is None or again is None or not _same(torch, whole, again):
                return None  # random, or nothing to compare
            part, part_ops = _run(torch, module, tuple(
                a[half:] if h else a for a, h in zip(args, halved, strict=True)), learner_file)
    finally:
        module.train(was_training)
    if part is None or whole.dim() < 1 or whole.shape[0] != batch or \
            part.shape != (batch - half, *whole.shape[1:]):
        return None
    if _same(torch, whole[half:], part):
        return None
    for (line, op, before), (line2, op2, after) in zip(whole_ops, part_ops, strict=False):
        if (line, op) != (line2, op2):
            break  # another path through the code: no op to blame
        if before.dim() >= 1 and before.shape[0] == batch and \
                after.shape == (batch - half, *before.shape[1:]) and \
                not _same(torch, before[half:], after):
            return {"line": line, "op": op[:60], "batch": int(batch)}
    return {"line": None, "op": None, "batch": int(batch)}


def _run(torch: Any, module: Any, args: tuple[Any, ...], learner_file: str
         ) -> tuple[Any, list[tuple[int, str, Any]]]:
    """The module's output (its first tensor) and the learner-line operations of the pass."""
    ops: list[tuple[int, str, Any]] = []

    class Watch(torch.overrides.TorchFunctionMode):
        def __torch_function__(self, func: Any, types: Any, args: tuple[Any, ...] = (),
                               kwargs: dict[str, Any] | None = None) -> Any:
            out = func(*args, **(kwargs or {}))
            if len(ops) < MAX_OPS and isinstance(out, torch.Tensor) and out.is_floating_point():
                line = _learner_line(learner_file)
                if line is not None:
                    ops.append((line, getattr(func, "__name__", str(func)), out))
            return out

    try:
        with Watch():
            output = module(*args)
    except Exception:
        return None, ops
    if isinstance(output, (tuple, list)):
        output = next((o for o in output if isinstance(o, torch.Tensor)), None)
    if not isinstance(output, torch.Tensor) or not output.is_floating_point():
        return None, ops
    return output, ops


def _learner_line(learner_file: str) -> int | None:
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_filename == learner_file:
            return frame.f_lineno
        frame = frame.f_back  # type: ignore[assignment]
    return None


def _same(torch: Any, a: Any, b: Any) -> bool:
    if a.shape != b.shape:
        return False
    scale = max(float(a.detach().abs().max()) if a.numel() else 0.0, 1.0)
    return bool(torch.allclose(a, b, rtol=1e-4, atol=1e-5 * scale, equal_nan=True))

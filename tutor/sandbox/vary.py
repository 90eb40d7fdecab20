"""Hidden varied inputs: a run whose leaves start from other values than the code wrote.

Only a run whose request asks for it (``vary``, a seed) is varied. A
``TorchFunctionMode`` watches the learner's code for the tensors it makes leaves that require
grad (a factory called with ``requires_grad=True``, ``requires_grad_()``, or
``t.requires_grad = True``) and changes their values before they require grad: each element
``v`` becomes ``v * s + sign(v) * t`` with ``s`` in [1.1, 1.3) and ``t`` in [0.1, 0.3): the
``i``-th element in storage order takes the ``i``-th draws of a generator of its own seeded
with the request's seed (never torch's default generator, whose draws the code sees). Signs
are kept (a positive input stays in the domain of ``log`` and ``sqrt``), and the change
depends only on the seed and the values in order (not the shape: ``[2., 1.]`` and
``[[2., 1.]]`` change alike), so the reference solution, run with the same seed, sees the
same inputs whatever order or way a program makes its leaves in.

The generators are seeded from the request's seed too, and so is every ``torch.manual_seed``
the code calls (the same mix of the seeds in both runs): random weights and inputs change as
well, even in a program that seeds them itself.

The grader (``tutor.grading.varied``) compares the values a learner's varied run reports with
the reference solution's varied run: a program that wrote its answers down cannot follow.
"""

from __future__ import annotations

import contextlib
import weakref
from typing import Any

VARY_FORMAT = 4
"""Changes whenever the way values are varied does: cached varied truths keyed with it."""
SCALE = (1.1, 0.2)
"""Each element is multiplied by ``SCALE[0] + SCALE[1] * u`` (``u`` uniform in [0, 1))..."""
SHIFT = (0.1, 0.2)
"""... and moved away from zero by ``SHIFT[0] + SHIFT[1] * u``."""
MAX_NAMES = 20
MAX_SHOWN_NUMEL = 16
"""Leaves this small report the values they started from (the grader shows them)."""


class Varier:
    """One varied run: :meth:`start` before the learner's code, :meth:`finish` after."""

    def __init__(self, torch: Any, seed: int) -> None:
        self.torch = torch
        self.seed = seed
        self.varied: list[tuple[weakref.ref[Any], Any]] = []
        """Each varied leaf, and its values as varied (small ones only)."""
        self.count = 0
        self.setter = torch.Tensor.requires_grad.__set__
        self.requires_grad_ = torch.Tensor.requires_grad_

    def _eligible(self, value: Any) -> bool:
        torch = self.torch
        return (isinstance(value, torch.Tensor) and value.is_leaf and not value.requires_grad
                and value.is_floating_point() and value.numel() > 0)

    def vary(self, tensor: Any) -> None:
        """Change ``tensor``'s values in place (it does not require grad yet)."""
        torch = self.torch
        shape = tuple(tensor.shape)
        generator = torch.Generator().manual_seed(self.seed)
        numel = tensor.numel()
        draws = torch.rand(numel, 2, generator=generator, dtype=torch.float64)
        scale = SCALE[0] + SCALE[1] * draws[:, 0]
        shift = SHIFT[0] + SHIFT[1] * draws[:, 1]
        with torch.no_grad():
            flat = tensor.detach().to("cpu", torch.float64).reshape(-1)
            sign = torch.where(flat < 0, -1.0, 1.0).to(torch.float64)
            tensor.copy_((flat * scale + sign * shift).reshape(shape))
            start = tensor.tolist() if numel <= MAX_SHOWN_NUMEL else None
        self.count += 1
        self.varied.append((weakref.ref(tensor), start))

    def on_function(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if kwargs.get("requires_grad") is True:  # a factory asked for a leaf that requires grad
            made = func(*args, **{**kwargs, "requires_grad": False})
            if not self._eligible(made):  # not a float tensor: torch says what is wrong
                return func(*args, **kwargs)
            self.vary(made)
            return made.requires_grad_(True)
        if func == self.requires_grad_:
            wanted = args[1] if len(args) > 1 else kwargs.get("requires_grad", True)
            if wanted is True and args and self._eligible(args[0]):
                self.vary(args[0])
        elif func == self.setter and len(args) == 2 and args[1] is True \
                and self._eligible(args[0]):
            self.vary(args[0])
        return func(*args, **kwargs)

    def start(self) -> None:
        varier = self

        class Mode(self.torch.overrides.TorchFunctionMode):  # type: ignore[name-defined]
            def __torch_function__(self, func: Any, types: Any, args: tuple[Any, ...] = (),
                                   kwargs: dict[str, Any] | None = None) -> Any:
                return varier.on_function(func, args, kwargs or {})

        self.mode = Mode()
        self.mode.__enter__()
        torch = self.torch
        self.manual_seed = torch.manual_seed
        torch.manual_seed = torch.random.manual_seed = self.reseed

    def reseed(self, seed: Any) -> Any:
        """``torch.manual_seed`` of a varied run: a program that seeds its generators itself
        (to make its model's weights, say) still draws other values, as the reference does."""
        return self.manual_seed(mixed(self.seed, int(seed)))

    def stop(self) -> None:
        with contextlib.suppress(Exception):  # the code left the mode stack otherwise
            self.mode.__exit__(None, None, None)
        self.torch.manual_seed = self.torch.random.manual_seed = self.manual_seed

    def finish(self, namespace: dict[str, Any]) -> dict[str, Any]:
        """What the run varied: how many leaves, the names the code gave them and the values
        they started from (plain data, validated in the parent as
        :class:`~tutor.sandbox.models.Varied`)."""
        leaves = [(ref(), start) for ref, start in self.varied]
        names: list[str] = []
        starts: dict[str, Any] = {}
        for name, value in list(namespace.items()):
            for leaf, start in leaves:
                if leaf is not None and value is leaf and not name.startswith("__"):
                    names.append(name)
                    if start is not None:
                        starts[name] = start
                    break
        names = sorted(names)[:MAX_NAMES]
        return {"count": self.count, "names": names,
                "starts": {name: starts[name] for name in names if name in starts}}


def mixed(vary: int, seed: int) -> int:
    """The seed a varied run's generators take where the code (or the run's own start)
    seeds them with ``seed``: the same for the learner's run and the reference's."""
    return (vary * 1_000_003 + seed) % 2**63


def start(torch: Any, seed: int) -> Varier:
    varier = Varier(torch, seed)
    varier.start()
    return varier

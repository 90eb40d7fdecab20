"""CUDA played by the CPU, for a program written for a GPU this machine does not have (a
program pasted from a forum post, asked about in the chat).

Inside the run, every request for a CUDA device is a request for the CPU, and a move to
CUDA is still a move: ``x.cuda()`` and ``x.to("cuda")`` return a copy made by autograd
(``ToCopyBackward0``), so what a move does to the graph (a leaf that requires grad becomes
a non-leaf whose ``.grad`` stays None) happens here as on the asker's GPU. A module's
``.cuda()`` keeps its parameters leaves, as on a GPU. ``torch.cuda.is_available()`` still
says False, so a program that picks its device falls back as it would. Runs in the child,
after torch is imported; torch is passed in, as the other run-time helpers take it.
"""

from __future__ import annotations

from typing import Any


def _is_cuda(torch: Any, device: Any) -> bool:
    if isinstance(device, torch.device):
        return bool(device.type == "cuda")
    if isinstance(device, str):
        return device == "cuda" or device.startswith("cuda:")
    return False


def start(torch: Any) -> Any:
    """Enter the stand-in; the returned mode's ``__exit__(None, None, None)`` ends it."""
    from torch.overrides import TorchFunctionMode

    cuda, to = torch.Tensor.cuda, torch.Tensor.to

    class CudaOnCpu(TorchFunctionMode):
        def __torch_function__(self, func: Any, types: Any, args: Any = (),
                               kwargs: Any = None) -> Any:
            kwargs = dict(kwargs or {})
            if func is cuda:  # a move, not the tensor itself
                return to(args[0], "cpu", copy=True)
            moved = any(_is_cuda(torch, a) for a in args[1:]) if func is to else False
            if _is_cuda(torch, kwargs.get("device")):
                kwargs["device"] = "cpu"
                moved = func is to
            if moved:
                args = (args[0], *("cpu" if _is_cuda(torch, a) else a for a in args[1:]))
                kwargs["copy"] = True
            return func(*args, **kwargs)

    mode = CudaOnCpu()
    mode.__enter__()
    return mode

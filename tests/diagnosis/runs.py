"""Builders for RunResults in tests that are about diagnosis, not about running code."""

from __future__ import annotations

from typing import Any

from tutor.sandbox.models import ErrorInfo, RunResult, TensorSnapshot, WarningInfo


def tensor(shape: list[int], *, dtype: str = "torch.float32", requires_grad: bool = False,
           is_leaf: bool = True, grad_fn: str | None = None, device: str = "cpu") -> TensorSnapshot:
    numel = 1
    for size in shape:
        numel *= size
    return TensorSnapshot(shape=shape, dtype=dtype, device=device, requires_grad=requires_grad,
                          is_leaf=is_leaf, grad_fn=grad_fn, numel=numel)


def failed(code: str, type_: str, message: str, line: int | None,
           **locals_: Any) -> RunResult:
    source_line = code.splitlines()[line - 1].strip() if line else None
    return RunResult(
        outcome="error",
        device="cpu",
        error=ErrorInfo(type=type_, message=message, line=line, source_line=source_line,
                        locals=locals_),
    )


def clean(warnings: list[WarningInfo] | None = None) -> RunResult:
    return RunResult(outcome="ok", device="cpu", warnings=warnings or [])

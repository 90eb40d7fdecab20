"""Builders for RunResults in tests that are about diagnosis, not about running code."""

from __future__ import annotations

from typing import Any

from tutor.diagnosis.models import Diagnosis
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


def diagnoses_for(sandbox: Any, code: str, result: RunResult | None = None
                  ) -> list[Diagnosis]:
    """Run ``code`` (unless its ``result`` is given) and give all its diagnoses (the checks'
    own bugs not hidden)."""
    from tutor.diagnosis import checks
    from tutor.diagnosis.reasoning import diagnose

    result = result if result is not None else sandbox.run(code)
    debug, checks.DEBUG = checks.DEBUG, True
    try:
        return diagnose(code, result, sandbox)
    finally:
        checks.DEBUG = debug


def first_for_error(sandbox: Any, code: str) -> Diagnosis:
    """Run ``code``, which must fail, and give its first diagnosis from evidence (the checks'
    own bugs not hidden)."""
    result = sandbox.run(code)
    assert result.outcome == "error", result.stdout
    return diagnoses_for(sandbox, code, result)[0]


def verified_diagnosis(sandbox: Any, code: str, expected: set[str], root: int,
                       fix_has: str) -> Diagnosis:
    """Run ``code``, diagnose it from evidence (the checks' own bugs not hidden), and check
    the first diagnosis: one of ``expected``, rooted at ``root``, with a fix that was applied
    and re-run (its patch contains ``fix_has``) and a chain in both languages."""
    from tutor.diagnosis import checks
    from tutor.diagnosis.reasoning import diagnose

    debug, checks.DEBUG = checks.DEBUG, True
    try:
        first = diagnose(code, sandbox.run(code), sandbox)[0]
    finally:
        checks.DEBUG = debug
    assert (first.id in expected, first.root_line) == (True, root), (
        first.id, first.root_line, first.fix.en)
    assert first.fix_verified is True and first.patch and fix_has in first.patch, first.patch
    assert first.fix_check is not None
    assert first.chain and all(step.en and step.zh for step in first.chain)
    return first


def found_with_a_working_fix(sandbox: Any, expected: str, root: int, fix_has: str,
                             code: str) -> None:
    """A silent bug's program runs, and its first diagnosis is ``expected`` at ``root`` with
    a fix whose re-run showed the symptom gone, said in both languages."""
    assert sandbox.run(code).ok
    first = verified_diagnosis(sandbox, code, {expected}, root, fix_has)
    assert first.fix_check is not None and first.fix_check.zh


def not_diagnosed(sandbox: Any, expected: str, right: str) -> None:
    """The program written right runs and gets no ``expected`` diagnosis."""
    from tutor.diagnosis.reasoning import diagnose

    result = sandbox.run(right)
    assert result.ok, result.error
    assert expected not in {d.id for d in diagnose(right, result, sandbox)}


def rubric() -> Any:
    """benchmarks/bench_diagnosis.py (its FAMILIES, judge and load_split), loaded from its
    file: the benchmark's rubric is the one the tests judge by, and it is no package."""
    import importlib.util
    import sys
    from pathlib import Path

    name = "bench_diagnosis"
    if name in sys.modules:
        return sys.modules[name]
    path = Path(__file__).resolve().parents[2] / "benchmarks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module

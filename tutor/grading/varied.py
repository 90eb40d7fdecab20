"""Grading on hidden varied inputs: does the learner's result follow the inputs?

A check that compares a value with the reference solution's (``value`` without a literal,
``stdout`` with ``same_as_solution``) can be passed by writing the value down, even with every
gradient routed through a real ``backward()``. So a submission that passes such checks runs a
second time with its leaves started from other values (:mod:`tutor.sandbox.vary`), and so
does the reference solution, with the same seed: the checked values must agree again.

The second run costs only where it can tell something: the reference's varied run (cached
like every truth) says which checks' values move with the inputs at all (a gradient constant
in ``x`` does not); a step where none does, or a submission that already failed those
checks, is not run again. Both runs are the learner's claim; the comparison happens here.
"""

from __future__ import annotations

import ast
import zlib
from typing import TYPE_CHECKING

from tutor.course.models import Check, RunnableStep, StdoutCheck, ValueCheck
from tutor.grading.checks import evaluate, probes_for, run_failure_message
from tutor.grading.compare import compare
from tutor.grading.expected import ExpectedCache
from tutor.grading.feedback import fmt_values, msg
from tutor.grading.models import CheckResult
from tutor.i18n import Text
from tutor.sandbox.models import Limits, RunResult

if TYPE_CHECKING:
    from tutor.sandbox.runner import Runner


def vary_seed(ref: str) -> int:
    """The seed of a step's varied runs: fixed per step, so the reference's run is cached."""
    return zlib.crc32(f"varied:{ref}".encode()) & 0x7FFF_FFFF


def varied_checks(step: RunnableStep) -> list[int]:
    """Indexes of the step's checks graded on varied inputs too."""
    if not step.varied:
        return []
    return [i for i, check in enumerate(step.checks) if check_varies(check)]


def check_varies(check: Check) -> bool:
    if isinstance(check, ValueCheck):
        return check.varied and check.expected is None
    return isinstance(check, StdoutCheck) and check.varied and check.same_as_solution


def follows_inputs(check: Check, truth: RunResult | None, varied: RunResult | None) -> bool:
    """Whether the reference's value of ``check`` changed when its inputs did (a check whose
    truth does not move cannot tell a written-down answer from the work)."""
    if truth is None or varied is None or truth.outcome != "ok" or varied.outcome != "ok":
        return False
    if isinstance(check, StdoutCheck):
        return truth.stdout.rstrip() != varied.stdout.rstrip()
    assert isinstance(check, ValueCheck)
    before, after = truth.probe(check.expr), varied.probe(check.expr)
    if before is None or after is None or before.value is None or after.value is None:
        return False
    same = compare(check.expr, after.value, before.value, rtol=check.rtol, atol=check.atol,
                   check_dtype=check.check_dtype)
    return not same.ok


def solution_varied(step: RunnableStep, ref: str, *, runner: Runner, device: str,
                    cache: ExpectedCache) -> RunResult:
    """The reference solution's varied run, with every probe of the step (cached)."""
    return cache.solution_run(runner, step.solution, probes_for(step.checks), device,
                              vary=vary_seed(ref))


def moving_checks(step: RunnableStep, ref: str, truth: RunResult, *, runner: Runner,
                  device: str, cache: ExpectedCache) -> tuple[list[int], RunResult | None]:
    """The varied checks whose truth moves with the inputs, and the varied truth."""
    candidates = varied_checks(step)
    if not candidates:
        return [], None
    varied = solution_varied(step, ref, runner=runner, device=device, cache=cache)
    return [i for i in candidates if follows_inputs(step.checks[i], truth, varied)], varied


MAX_SHOWN = 3
SHOWN_CHARS = 120


def _inputs(varied: RunResult) -> Text:
    """The varied inputs by name, with the values the reference's varied run started them
    from where they are short (inputs, not answers: shown even where answers are not)."""
    report = varied.varied
    if report is None or not report.names:
        return msg("varied_other_unnamed")
    shown = [f"`{name}` = {fmt_values(report.starts[name])}"
             for name in report.names if name in report.starts]
    if len(shown) == len(report.names) <= MAX_SHOWN and all(
            len(text) <= SHOWN_CHARS for text in shown):
        return Text(en=", ".join(shown), zh="，".join(shown))
    listed = ", ".join(f"`{name}`" for name in report.names)
    return msg("varied_other", names=Text(en=listed, zh=listed.replace(", ", "、")))


def grade_varied(
    step: RunnableStep, ref: str, code: str, tree: ast.Module, run: RunResult,
    truth: RunResult, results: list[CheckResult], *, runner: Runner, device: str,
    cache: ExpectedCache, limits: Limits | None = None, reveal: bool = True,
) -> list[CheckResult]:
    """``results`` (one per check of the step, from the ordinary run) with each varied check
    that passed there failed where the learner's varied run does not agree with the
    reference's; unchanged (and nothing run) where no varied check can tell."""
    passed = [i for i in varied_checks(step) if results[i].status == "pass"]
    if not passed or run.outcome != "ok":
        return results
    moving, varied_truth = moving_checks(step, ref, truth, runner=runner, device=device,
                                         cache=cache)
    moving = [i for i in moving if i in passed]
    if not moving or varied_truth is None:
        return results
    checks = [step.checks[i] for i in moving]
    mine = runner.run(code, device=device, probes=probes_for(checks), limits=limits,
                      vary=vary_seed(ref))
    again = evaluate(checks, code, tree, mine, varied_truth, reveal=reveal)
    lead = msg("varied_differs", inputs=_inputs(varied_truth))
    graded = list(results)
    for i, result in zip(moving, again, strict=True):
        if result.status == "pass":
            continue
        why = result.message if mine.outcome == "ok" else run_failure_message(mine)
        before = graded[i]
        graded[i] = before.model_copy(update={
            "status": "fail", "points": 0.0, "message": lead + why,
            "output": result.output, "output_text": result.output_text,
        })
    return graded

"""grade_step / grade_run / the expected-values cache, and the CUDA path."""

from __future__ import annotations

from pathlib import Path

import pytest

from tutor.course.models import CodeStep, Lesson
from tutor.grading import ExpectedCache, expected_run, grade_run, grade_step, probes_for
from tutor.sandbox import Sandbox
from tutor.sandbox.models import RunResult

CORRECT = "import torch\nx = torch.ones(2, requires_grad=True)\n(x + 2).sum().backward()\n"


def _step(lesson: Lesson, step_id: str = "nonscalar") -> CodeStep:
    step = lesson.step(step_id)
    assert isinstance(step, CodeStep)
    return step


def test_grade_run_on_a_run_made_by_the_caller(
    seed_lesson: Lesson, sandbox: Sandbox, shared_cache: ExpectedCache
) -> None:
    """The TUI runs the code itself (to show its output) and grades that run."""
    step = _step(seed_lesson)
    run = sandbox.run(CORRECT, probes=probes_for(step.checks))
    truth = expected_run(step, runner=sandbox, cache=shared_cache)
    verdict = grade_run(seed_lesson, step, CORRECT, run, truth)
    direct = grade_step(seed_lesson, step, CORRECT, runner=sandbox, cache=shared_cache)
    assert verdict.passed and verdict.run == run
    assert verdict.model_dump(exclude={"run"}) == direct.model_dump(exclude={"run"})


def test_disk_cache_serves_the_truth_and_refuses_damaged_entries(
    seed_lesson: Lesson, sandbox: Sandbox, tmp_path: Path
) -> None:
    step = _step(seed_lesson)
    first = ExpectedCache(tmp_path)
    expected_run(step, runner=sandbox, cache=first)
    assert first.runs == 1
    second = ExpectedCache(tmp_path)
    expected_run(step, runner=sandbox, cache=second)
    assert second.runs == 0  # from disk
    entry = next(p for p in tmp_path.rglob("*.json"))
    entry.write_bytes(entry.read_bytes().replace(b"1.0", b"9.0"))
    third = ExpectedCache(tmp_path)
    truth = expected_run(step, runner=sandbox, cache=third)
    assert third.runs == 1  # the altered entry failed its MAC
    probe = truth.probe("x.grad")
    assert probe is not None and probe.value is not None
    assert probe.value.values == [1.0, 1.0]  # type: ignore[union-attr]
    keys = {p.name for p in tmp_path.rglob("*.json")}
    assert len(keys) == 1


def test_a_broken_reference_solution_is_the_lesson_s_fault(
    seed_lesson: Lesson, sandbox: Sandbox
) -> None:
    step = _step(seed_lesson).model_copy(update={"solution": "import torch\ny = 1\n"})
    verdict = grade_step(seed_lesson, step, CORRECT, runner=sandbox,
                         cache=ExpectedCache(disk=False))
    assert verdict.status == "error"
    value = next(c for c in verdict.checks if c.name == "value:x.grad")
    assert value.status == "error" and "not in your code" in value.message.en


def test_grade_step_rejects_other_step_kinds(seed_lesson: Lesson, sandbox: Sandbox) -> None:
    with pytest.raises(TypeError):
        grade_step(seed_lesson, seed_lesson.step("mm-xgrad"), "", runner=sandbox)  # type: ignore[arg-type]


@pytest.mark.cuda
def test_grading_on_cuda(seed_lesson: Lesson, sandbox: Sandbox) -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    cache = ExpectedCache(disk=False)
    step = _step(seed_lesson)
    verdict = grade_step(seed_lesson, step, CORRECT, runner=sandbox, device="cuda", cache=cache)
    assert verdict.passed, [c.message.en for c in verdict.checks]
    assert verdict.run is not None and verdict.run.device.startswith("cuda")
    wrong = CORRECT.replace("sum", "mean")
    failed = grade_step(seed_lesson, step, wrong, runner=sandbox, device="cuda", cache=cache)
    assert failed.score == 3.0
    mm = grade_step(seed_lesson, _step(seed_lesson, "mm"),
                    (Path(__file__).parent / "submissions" / "ana" / "mm.py").read_text(),
                    runner=sandbox, device="cuda", cache=cache)
    assert mm.passed, [c.message.en for c in mm.checks]


class _SlowTruth:
    """The sandbox, but the reference solution's first ``stalls`` runs time out, as they can
    on a machine busy with other work."""

    def __init__(self, sandbox: Sandbox, solution: str, stalls: int) -> None:
        self.sandbox, self.solution, self.stalls = sandbox, solution, stalls

    def run(self, code: str, **options: object) -> RunResult:
        result = self.sandbox.run(code, **options)  # type: ignore[arg-type]
        if code == self.solution and self.stalls > 0:
            self.stalls -= 1
            return result.model_copy(update={"outcome": "timeout", "probes": []})
        return result


def test_a_reference_run_that_timed_out_once_is_run_again(
    seed_lesson: Lesson, sandbox: Sandbox
) -> None:
    """A busy machine must not cost the learner the points (the hostile report test once
    scored an honest submission 0 under a parallel test run)."""
    step = _step(seed_lesson)
    runner = _SlowTruth(sandbox, step.solution, stalls=1)
    verdict = grade_step(seed_lesson, step, CORRECT, runner=runner,  # type: ignore[arg-type]
                         cache=ExpectedCache(disk=False))
    assert verdict.passed, verdict.message


def test_a_reference_run_that_never_finishes_leaves_the_submission_ungraded(
    seed_lesson: Lesson, sandbox: Sandbox
) -> None:
    step = _step(seed_lesson)
    runner = _SlowTruth(sandbox, step.solution, stalls=10)
    cache = ExpectedCache(disk=False)
    verdict = grade_step(seed_lesson, step, CORRECT, runner=runner,  # type: ignore[arg-type]
                         cache=cache)
    assert verdict.status == "not_gradable" and verdict.score == 0.0
    assert verdict.message is not None and "reference solution" in verdict.message.en
    assert "参考答案" in verdict.message.zh
    assert sum(c.max_points for c in verdict.checks) == verdict.max_score > 0
    truth = expected_run(step, runner=sandbox, cache=cache)  # a timeout is never cached
    assert truth.outcome == "ok"
    run = sandbox.run(CORRECT, probes=probes_for(step.checks))
    stalled = truth.model_copy(update={"outcome": "timeout"})
    assert grade_run(seed_lesson, step, CORRECT, run, stalled).status == "not_gradable"

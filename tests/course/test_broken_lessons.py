"""Each broken fixture lesson yields its one problem at the exact ``path:line:col``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tutor.course.lint import lint_paths

STATIC = {
    "bad_indentation.yaml": (9, 10, "YAML syntax error: mapping values are not allowed here"),
    "duplicate_id.yaml": (8, 9, "duplicate step id 'intro' (also on line 4)"),
    "missing_translation.yaml": (6, 5, "steps[0].title: missing 'zh' text"),
    "undefined_variable.yaml": (18, 15, "check reads 'z', which the solution never defines"),
    "unknown_key.yaml": (8, 5, "unknown key 'hnits' in steps[0] (did you mean 'hints'?)"),
    "wrong_type.yaml": (8, 15, "steps[0].multiple: Input should be a valid boolean"),
}
"""File -> (line, col, start of the message) found without running anything."""

DYNAMIC = {
    "failing_solution.yaml": (8, 5, "step 'grad' solution: "),
    "fix_starter_passes.yaml": (8, 5, "step 'nothing-to-fix' starter: "),
}
"""File -> where the problem found by running the reference solutions is reported."""


def _expected_lines(folder: Path, table: dict[str, tuple[int, int, str]]) -> list[str]:
    return [f"{folder / name}:{line}:{col}: {text}" for name, (line, col, text) in table.items()]


def _matches(lines: list[str], expected: list[str]) -> bool:
    return len(lines) == len(expected) and all(
        got.startswith(want) for got, want in zip(sorted(lines), sorted(expected), strict=True)
    )


def test_static_problems_each_at_their_exact_position(broken_lessons: Path):
    report = lint_paths([broken_lessons])
    lines = [problem.format() for problem in report.problems]
    assert _matches(lines, _expected_lines(broken_lessons, STATIC)), lines
    assert all(problem.severity == "error" for problem in report.problems)
    assert report.failed()


def test_cli_static_only_prints_every_problem_and_exits_1(tutor_cli):
    relative = Path("tests/fixtures/broken_lessons")  # as typed, from the repo root
    result = tutor_cli("lint", "--static-only", str(relative))
    assert result.returncode == 1, result.stderr
    *lines, summary = result.stdout.splitlines()
    assert _matches(lines, _expected_lines(relative, STATIC)), result.stdout
    assert lines == sorted(lines)
    assert summary == "6 problems in 6 files"
    assert "Traceback" not in result.stderr


@pytest.mark.slow
def test_cli_runs_solutions_and_reports_failing_solution_and_passing_starter(
    tutor_cli, broken_lessons: Path
):
    result = tutor_cli("lint", "--device", "cpu", str(broken_lessons))
    assert result.returncode == 1, result.stderr
    *lines, summary = result.stdout.splitlines()
    expected = _expected_lines(broken_lessons, {**STATIC, **DYNAMIC})
    assert _matches(lines, expected), result.stdout
    assert summary == "8 problems in 8 files"


@pytest.mark.slow
def test_cli_mini_course_is_clean_when_solutions_run(tutor_cli, mini_course: Path):
    result = tutor_cli("lint", "--device", "cpu", str(mini_course))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines() == ["2 lessons, 9 steps: all clean"]


def test_bundled_course_is_statically_clean(tutor_cli):
    result = tutor_cli("lint", "--static-only")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines()[-1].endswith(": all clean")


@pytest.mark.slow
def test_bundled_course_solutions_pass_their_own_checks(tutor_cli):
    result = tutor_cli("lint", "--device", "cpu")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines()[-1].endswith(": all clean")


@pytest.mark.slow
def test_cli_unknown_device_is_one_clear_error(tutor_cli, mini_course: Path):
    result = tutor_cli("lint", "--device", "tpu", str(mini_course))
    assert result.returncode == 2
    assert result.stderr.startswith("tutor: error:") and "tpu" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.cuda
@pytest.mark.slow
def test_cli_mini_course_solutions_pass_on_cuda(tutor_cli, mini_course: Path):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device here")
    result = tutor_cli("lint", "--device", "cuda", str(mini_course))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines() == ["2 lessons, 9 steps: all clean"]

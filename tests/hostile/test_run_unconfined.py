"""Where the kernel cannot confine runs: `tutor run` says so once and runs; `tutor grade`
refuses to grade for marks unless the teacher passes --unconfined."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import tutor.sandbox
from tutor.cli import main
from tutor.sandbox import Sandbox

REPO = Path(__file__).resolve().parents[2]


class UnconfinedSandbox(Sandbox):
    """A sandbox on a kernel that gives no namespaces (confinement turned off)."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options, confine=False)


@pytest.fixture
def unconfined(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tutor.sandbox, "Sandbox", UnconfinedSandbox)


def test_run_says_once_that_it_is_unconfined_and_runs(
    unconfined: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "ok.py"
    script.write_text("print(6 * 7)\n")
    assert main(["run", str(script), "--device", "cpu", "--lang", "en"]) == 0
    captured = capsys.readouterr()
    assert captured.out == "42\n"
    assert captured.err.count("cannot confine runs") == 1


def test_run_confined_says_nothing_of_it(sandbox: Sandbox, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    if not sandbox.confinement().confined:
        pytest.skip("no namespaces on this kernel")
    script = tmp_path / "ok.py"
    script.write_text("print(6 * 7)\n")
    assert main(["run", str(script), "--device", "cpu", "--lang", "en"]) == 0
    assert "confine" not in capsys.readouterr().err


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_grade_refuses_unconfined_without_the_flag(
    unconfined: None, tmp_path: Path, capsys: pytest.CaptureFixture[str], lang: str
) -> None:
    student = tmp_path / "class" / "ana"
    student.mkdir(parents=True)
    (student / "fix-scalar.py").write_text("print('hi')\n")
    report = tmp_path / "report.json"
    status = main(["grade", str(tmp_path / "class"), "--json", str(report), "--lang", lang])
    assert status == 3
    err = capsys.readouterr().err
    assert ("--unconfined" in err) and not report.exists()
    assert ("cannot confine" in err) if lang == "en" else ("无法隔离" in err)


def test_grade_with_the_flag_grades_and_warns(
    unconfined: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    student = tmp_path / "class" / "ana"
    student.mkdir(parents=True)
    (student / "fix-scalar.py").write_text("print('hi')\n")
    report = tmp_path / "report.json"
    status = main(["grade", str(tmp_path / "class"), "--json", str(report), "--lang", "en",
                   "--unconfined"])
    assert status == 0 and report.exists()
    assert "grading unconfined" in capsys.readouterr().err

"""Issue 22 #9: 'did you mean' for mistyped names and answers, and a run that raised the
error the step asks for reads as success."""

from __future__ import annotations

from pathlib import Path

import pytest

from tutor.grading.models import Verdict
from tutor.i18n import Text
from tutor.learning import Attempt
from tutor.learning.did_you_mean import for_answer, for_error, tensor_names
from tutor.sandbox.models import ErrorInfo, RunResult
from tutor.tui.render import diagnosis_markdown, output_text, verdict_markdown


def test_tensor_method_typo() -> None:
    assert for_error("AttributeError", "'Tensor' object has no attribute 'backwards'") == \
        "backward"
    assert for_error("AttributeError", "'Tensor' object has no attribute 'zzzzqqq'") is None
    assert for_error("AttributeError", "'Foo' object has no attribute 'backwards'") is None


def test_name_typo_uses_the_learners_names() -> None:
    assert for_error("NameError", "name 'torh' is not defined") == "torch"
    assert for_error("NameError", "name 'lenght' is not defined", ["length"]) == "length"
    assert for_error("NameError", "name 'x' is not defined") is None


@pytest.mark.parametrize(("typed", "meant"), [("false", "False"), ("true", "True"),
                                              ("none", "None"), ("Flase", "False"),
                                              ("False", None), ("x.grad", None),
                                              ("tensor([1.])", None)])
def test_answer_literals(typed: str, meant: str | None) -> None:
    assert for_answer(typed) == meant


def test_tensor_names_are_torchs() -> None:
    torch = pytest.importorskip("torch")
    assert set(tensor_names()) == {n for n in dir(torch.Tensor) if not n.startswith("_")}


def _raised(line: int = 5, kind: str = "AttributeError",
            message: str = "'Tensor' object has no attribute 'backwards'") -> RunResult:
    return RunResult(outcome="error", device="cpu",
                     error=ErrorInfo(type=kind, message=message, line=line,
                                     source_line="y.backwards()"))


def _attempt(result: RunResult, status: str) -> Attempt:
    verdict = Verdict(step="l/s", status=status, score=1.0 if status == "pass" else 0.0,
                      max_score=1.0,
                      run=result, checks=[], message=Text(en="", zh=""))
    return Attempt(step_ref="l/s", verdict=verdict)


def test_the_output_and_verdict_suggest_backward() -> None:
    attempt = _attempt(_raised(), "fail")
    assert "Did you mean backward()?" in output_text(attempt.run, "en").plain
    assert "你是不是想写 backward()？" in verdict_markdown(attempt, "zh")
    assert diagnosis_markdown(attempt, "en").startswith("**Did you mean backward()?**")


def test_passing_reproduce_the_error_step_reads_as_success() -> None:
    """A passing step that asks for the error showed a red '✗ line 5 raised RuntimeError'."""
    result = _raised(kind="RuntimeError", message="grad can be implicitly created only for "
                     "scalar outputs")
    attempt = _attempt(result, "pass")
    out = output_text(result, "en", error_expected=True)
    assert out.plain.startswith("✓ raised RuntimeError on line 5")
    assert "✗" not in out.plain
    assert "✗" not in verdict_markdown(attempt, "en")


def test_false_typed_in_an_answer_step() -> None:
    attempt = _attempt(RunResult(outcome="ok", device="cpu"), "fail")
    assert "Did you mean False?" in verdict_markdown(attempt, "en", typed="false")
    assert "Did you mean" not in verdict_markdown(attempt, "en", typed="True")


def test_no_private_names_file() -> None:
    text = (Path(__file__).resolve().parents[2] / "tutor/learning/tensor_names.txt").read_text()
    assert "backward\n" in text and "\n_" not in text

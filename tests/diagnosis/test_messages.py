"""torch's notes for its own developers (build paths, C++ stacks) never reach a learner:
``for_learner`` trims them, and the places that show a run's warnings and errors use it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tutor.diagnosis import for_learner
from tutor.sandbox import Sandbox
from tutor.sandbox.models import ErrorInfo, RunResult, WarningInfo

CORPUS = Path(__file__).parent / "corpus"
NONLEAF = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. See "
    "github.com/pytorch/pytorch/pull/30531 for more information. (Triggered internally at "
    "/__w/pytorch/pytorch/build/aten/src/ATen/core/TensorBody.h:493.)"
)
CPP_STACK = (
    "shape '[2, 5]' is invalid for input of size 6\n"
    "Exception raised from infer_size_impl at /__w/pytorch/pytorch/aten/src/ATen/InferSize.h:"
    "93 (most recent call first):\nframe #0: c10::Error::Error(...) + 0x9d (0x7f in libc10.so)\n"
)


def test_build_notes_are_trimmed_and_the_rest_is_kept() -> None:
    assert for_learner(NONLEAF) == NONLEAF.split(" (Triggered")[0]
    assert for_learner(CPP_STACK) == "shape '[2, 5]' is invalid for input of size 6"
    plain = "grad can be implicitly created only for scalar outputs"
    assert for_learner(plain) == plain
    # a parenthesis of the learner's own is not a build note
    assert for_learner("bad value (see line 3).") == "bad value (see line 3)."


def test_a_real_warning_is_shown_without_the_build_path(sandbox: Sandbox) -> None:
    code = ("import torch\na = torch.ones(2, requires_grad=True)\nb = a * 2\n"
            "b.sum().backward()\nprint(b.grad)\n")
    (warning,) = sandbox.run(code).warnings
    if "Triggered internally" not in warning.message:
        pytest.skip("this torch build adds no build note to the warning")
    shown = for_learner(warning.message)
    assert "Triggered internally" not in shown and "/__w/" not in shown
    assert shown.startswith("The .grad attribute of a Tensor that is not a leaf Tensor")


RUN = RunResult(
    outcome="error",
    device="cpu",
    warnings=[WarningInfo(category="UserWarning", message=NONLEAF, line=5)],
    error=ErrorInfo(type="RuntimeError", message=CPP_STACK, line=2, source_line="x.view(2, 5)"),
)


def test_tutor_run_prints_warnings_and_errors_without_build_notes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from tutor.cli import run_cmd

    run_cmd._print_result(RUN, [], "en")
    err = capsys.readouterr().err
    assert "Warning on line 5: UserWarning: The .grad attribute" in err
    assert "RuntimeError: shape '[2, 5]' is invalid for input of size 6" in err
    assert "Triggered internally" not in err and "/__w/" not in err and "frame #0" not in err


def test_the_tui_output_pane_shows_no_build_notes() -> None:
    render = pytest.importorskip("tutor.tui.render")
    shown = render.output_plain(RUN, "zh")
    assert "UserWarning: The .grad attribute" in shown
    assert "Triggered internally" not in shown and "/__w/" not in shown and "frame #0" not in shown

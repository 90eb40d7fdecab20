"""gradcheck given float32 inputs: a correct backward fails on rounding noise, and the fix
(float64 where the inputs are made) is tried; a wrong backward still fails in float64, so no
float64 fix is claimed for it."""

from __future__ import annotations

from typing import Any

from tutor.diagnosis.reasoning import diagnose

RIGHT_IN_FLOAT32 = """import torch
from torch.autograd import Function, gradcheck


class Cube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * 3 * x ** 2


inputs = torch.randn(8, requires_grad=True)
print(gradcheck(Cube.apply, (inputs,)))
"""

WRONG_IN_FLOAT32 = RIGHT_IN_FLOAT32.replace("grad_out * 3 * x ** 2", "grad_out * 2 * x ** 2")


def test_float32_inputs_are_the_cause_and_float64_is_tried(sandbox: Any) -> None:
    result = sandbox.run(RIGHT_IN_FLOAT32)
    assert result.error is not None and result.error.type == "GradcheckError"
    first = diagnose(RIGHT_IN_FLOAT32, result, sandbox)[0]
    assert (first.id, first.root_line, first.fix_verified) == ("gradcheck-float32", 17, True)
    assert "torch.randn(8, requires_grad=True, dtype=torch.float64)" in (first.patch or "")
    assert "float64" in first.title.en and "float64" in first.title.zh


def test_a_wrong_backward_is_not_blamed_on_the_dtype(sandbox: Any) -> None:
    first = diagnose(WRONG_IN_FLOAT32, sandbox.run(WRONG_IN_FLOAT32), sandbox)[0]
    assert not (first.id == "gradcheck-float32" and first.fix_verified)
    # and the message's own words no longer claim the inputs were float64
    assert "same float64 inputs" not in first.explanation.en


LAYER_IN_FLOAT32 = """import torch
signal = torch.rand([1, 4, 19], requires_grad=True)
conv = torch.nn.Conv1d(4, 6, 5, stride=4)
torch.autograd.gradcheck(conv, (signal,))
"""


def test_a_layer_checked_in_float32_gets_float64_weights_too(sandbox: Any) -> None:
    first = diagnose(LAYER_IN_FLOAT32, sandbox.run(LAYER_IN_FLOAT32), sandbox)[0]
    assert (first.id, first.fix_verified) == ("gradcheck-float32", True)
    assert "torch.nn.Conv1d(4, 6, 5, stride=4).double()" in (first.patch or "")
    assert "`conv`" in first.fix.en and "`conv`" in first.fix.zh

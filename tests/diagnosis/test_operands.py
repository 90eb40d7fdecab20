"""Diagnoses about two operands say which one is which: a dtype mix names the float64 (or
integer) tensor and the other one, a loss names its target, and the fix they suggest is code
that runs when pasted over the failing operand."""

from __future__ import annotations

import re

import pytest

from tutor.diagnosis import diagnose_error
from tutor.diagnosis.engine import base_of, shape_from_torch
from tutor.sandbox import Sandbox

from .runs import failed, tensor

MM_DOUBLE = "expected m1 and m2 to have the same dtype, but got: double != float"
MM_DOUBLE_REVERSED = "expected m1 and m2 to have the same dtype, but got: float != double"
LINEAR_FLOAT_DOUBLE = "mat1 and mat2 must have the same dtype, but got Float and Double"
CE_MULTI = "0D or 1D target tensor expected, multi-target not supported"


@pytest.mark.parametrize(
    ("torch_way", "ours"),
    [("3", "(3,)"), ("2, 3", "(2, 3)"), ("[4, 1]", "(4, 1)"), ("torch.Size([4])", "(4,)"),
     ("torch.Size([])", "()"), ("2 x 2", "(2, 2)"), ("16x1x1", "(16, 1, 1)"), ("-1, 5", "(-1, 5)")],
)
def test_shapes_from_messages_are_spelled_like_every_other_shape(torch_way: str, ours: str) -> None:
    assert shape_from_torch(torch_way) == ours


@pytest.mark.parametrize(
    ("expr", "base"),
    [("target", "target"), ("target.view(4, 1)", "target"), ("y.unsqueeze(1).clone()", "y"),
     ("w.T", "w"), ("y[:, None]", None), ("labels.long()", None), ("model(x)", None)],
)
def test_base_of_strips_only_reshapes(expr: str, base: str | None) -> None:
    assert base_of(expr) == base


def test_a_double_matrix_product_without_a_layer_names_both_operands() -> None:
    code = "import torch\na = torch.ones(2, 2)\nb = torch.ones(2, 2)\nc = torch.mm(a, b)\n"
    for message, double, single in ((MM_DOUBLE, "a", "b"), (MM_DOUBLE_REVERSED, "b", "a")):
        run = failed(code, "RuntimeError", message, 4,
                     **{double: tensor([2, 2], dtype="torch.float64"), single: tensor([2, 2])})
        found = diagnose_error(run, code)
        assert found is not None and found.id == "dtype-double-float-operands"
        assert found.variable == double
        assert f"`{double}` is float64 (double) but `{single}` is float32" == found.title.en
        assert f"`{double}.float()`" in found.fix.en and f"`{single}.double()`" in found.fix.en
        assert "layer" not in found.explanation.en + found.fix.en
        assert f"`{double}`" in found.title.zh and f"`{single}.double()`" in found.fix.zh


def test_without_the_operands_dtypes_no_side_is_guessed() -> None:
    code = "import torch\nc = torch.mm(torch.ones(2, 2).double(), torch.ones(2, 2))\n"
    found = diagnose_error(failed(code, "RuntimeError", MM_DOUBLE, 2), code)
    assert found is not None and found.id == "dtype-mismatch"


def test_a_double_model_fed_float_data_is_not_called_float64_data() -> None:
    code = "import torch\nnet = torch.nn.Linear(3, 1).double()\nx = torch.ones(5, 3)\ny = net(x)\n"
    run = failed(code, "RuntimeError", LINEAR_FLOAT_DOUBLE, 4, x=tensor([5, 3]))
    found = diagnose_error(run, code)
    assert found is not None and found.id == "dtype-float-double-layer"
    assert "`x.double()`" in found.fix.en and "`net`" in found.explanation.en


def test_a_loss_diagnosis_is_about_the_target_and_shows_its_values() -> None:
    code = ("import torch\nimport torch.nn.functional as F\nlogits = torch.randn(4, 3)\n"
            "target = torch.tensor([0., 1., 2., 1.])\n"
            "loss = F.cross_entropy(logits, target.view(4, 1))\n")
    run = failed(code, "RuntimeError", CE_MULTI, 5,
                 logits=tensor([4, 3], requires_grad=True), target=tensor([4]))
    found = diagnose_error(run, code)
    assert found is not None and found.id == "ce-target-float-shape"
    assert found.variable == "target.view(4, 1)"
    assert found.details is not None and found.details.en.startswith("`target`: shape (4,)")
    assert "`target.view(-1).long()`" in found.fix.en
    # integer labels with an extra dimension only need flattening
    run = failed(code, "RuntimeError", CE_MULTI, 5, target=tensor([4], dtype="torch.int64"))
    found = diagnose_error(run, code)
    assert found is not None and found.id == "ce-target-shape"
    assert "`target.view(-1)`" in found.fix.en and ".long()" not in found.fix.en


FIXED_RUNS = [
    # (program, diagnosis id, the failing operand as written)
    ("import torch\na = torch.ones(2, 2, dtype=torch.float64)\nb = torch.ones(2, 2)\n"
     "c = torch.mm(a, b)\n", "dtype-double-float-operands", "a"),
    ("import torch\nimport torch.nn.functional as F\nlogits = torch.randn(4, 3, "
     "requires_grad=True)\ntarget = torch.tensor([0., 1., 2., 1.])\n"
     "loss = F.cross_entropy(logits, target.view(4, 1))\nloss.backward()\n",
     "ce-target-float-shape", "target.view(4, 1)"),
    ("import torch\nimport torch.nn.functional as F\nlogits = torch.randn(3, 5)\n"
     "y = torch.tensor([[1], [4], [0]])\nloss = F.cross_entropy(logits, y)\n",
     "ce-target-shape", "y"),
]


@pytest.mark.parametrize(("code", "entry_id", "operand"), FIXED_RUNS,
                         ids=[f"{i}-{case[1]}" for i, case in enumerate(FIXED_RUNS)])
def test_the_suggested_fix_runs_when_pasted_over_the_operand(
    code: str, entry_id: str, operand: str, sandbox: Sandbox
) -> None:
    first = sandbox.run(code)
    assert first.error is not None and first.error.line is not None
    found = diagnose_error(first, code)
    assert found is not None and found.id == entry_id
    snippet = re.findall(r"`([^`]+)`", found.fix.en)[0]
    lines = code.splitlines()
    failing = lines[first.error.line - 1]
    at = re.compile(r"(?<![\w.])" + re.escape(operand) + r"(?![\w(])")
    assert at.search(failing), (operand, failing)
    lines[first.error.line - 1] = at.sub(lambda _: snippet, failing, count=1)
    second = sandbox.run("\n".join(lines) + "\n")
    assert second.ok, (snippet, second.error)

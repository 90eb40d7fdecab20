"""The engine on hand-built runs: messages torch prints where this machine cannot produce
them (CUDA), the learner's names in the text, strict matching, generic fallbacks."""

from __future__ import annotations

import pytest

from tutor.diagnosis import diagnose_error, explain
from tutor.sandbox.models import ErrorInfo, RunResult, WarningInfo

from .runs import clean, failed, tensor

NON_SCALAR = "grad can be implicitly created only for scalar outputs"


def test_non_scalar_fix_is_in_the_learners_names() -> None:
    code = "import torch\nw = torch.ones(4, requires_grad=True)\nloss = w * 3\nloss.backward()\n"
    run = failed(code, "RuntimeError", NON_SCALAR, 4,
                 loss=tensor([4], requires_grad=True, is_leaf=False, grad_fn="MulBackward0"))
    diagnosis = diagnose_error(run, code)
    assert diagnosis is not None
    assert (diagnosis.id, diagnosis.variable, diagnosis.line) == ("non-scalar-backward", "loss", 4)
    assert "`loss` has shape (4,)" in diagnosis.explanation.en
    assert "`loss.sum().backward()`" in diagnosis.fix.en
    assert "gradient=torch.ones_like(loss)" in diagnosis.fix.en
    assert "(4,)" in diagnosis.explanation.zh and "loss.mean()" in diagnosis.fix.zh
    assert diagnosis.details is not None and "MulBackward0" in diagnosis.details.en
    assert diagnosis.lesson_ref == "non-scalar/fix-scalar"


def test_the_receiver_may_be_an_expression() -> None:
    code = "import torch\nx = torch.ones(2, requires_grad=True)\n(x * 2).backward()\n"
    diagnosis = diagnose_error(failed(code, "RuntimeError", NON_SCALAR, 3), code)
    assert diagnosis is not None and diagnosis.variable == "(x * 2)"
    assert "`(x * 2).sum().backward()`" in diagnosis.fix.en


def test_mm_names_both_operands() -> None:
    code = "import torch\nA = torch.ones(2, 3)\nB = torch.ones(2, 3)\nC = torch.mm(A, B)\n"
    run = failed(code, "RuntimeError", "mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)",
                 4)
    diagnosis = diagnose_error(run, code)
    assert diagnosis is not None and diagnosis.id == "mm-shape-mismatch"
    assert "`A` has shape (2, 3) and `B` has shape (2, 3)" in diagnosis.explanation.en
    assert "torch.mm(A, B.t())" in diagnosis.fix.en


def test_same_message_from_a_layer_is_the_in_features_diagnosis() -> None:
    code = "h = self.fc1(x)\n"
    run = failed(code, "RuntimeError", "mat1 and mat2 shapes cannot be multiplied (1x256 and "
                 "400x120)", 1, x=tensor([1, 256]))
    diagnosis = diagnose_error(run, code)
    assert diagnosis is not None and diagnosis.id == "linear-in-features"
    assert diagnosis.title.en == "`self.fc1` expects 400 input features but gets 256"
    # one row per sample (the layer's width is the fix) or an unflattened image (flatten
    # first): the message alone does not say which, so the advice says how to tell
    assert "`x.shape`" in diagnosis.fix.en and "(256)" in diagnosis.fix.en
    assert "`x.flatten(1)`" in diagnosis.fix.en and "16 * 5 * 5" not in diagnosis.fix.en


@pytest.mark.parametrize(
    ("type_", "message", "expected"),
    [
        # strings as torch builds them for CUDA (from libtorch); this machine has no GPU
        ("RuntimeError", "Expected all tensors to be on the same device, but found at least "
         "two devices, cuda:0 and cpu!", "device-mismatch"),
        ("RuntimeError", "Input type (torch.cuda.FloatTensor) and weight type "
         "(torch.FloatTensor) should be the same", "device-mismatch-layer"),
        ("RuntimeError", "Input type (double) and bias type (float) should be the same",
         "dtype-double-float"),
        ("RuntimeError", "Input type (long int) and bias type (float) should be the same",
         "dtype-long-float"),
        ("RuntimeError", "Input type (float) and bias type (double) should be the same",
         "dtype-float-double-layer"),
        ("TypeError", "can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to "
         "copy the tensor to host memory first.", "numpy-on-gpu"),
        ("RuntimeError", "No CUDA GPUs are available", "cuda-not-available"),
        ("AssertionError", "Torch not compiled with CUDA enabled", "cuda-not-available"),
        ("RuntimeError", "mat1 and mat2 must have the same dtype, but got Half and Float",
         "dtype-mismatch"),
    ],
)
def test_messages_this_machine_cannot_produce(type_: str, message: str, expected: str) -> None:
    code = "import torch\nout = model(x)\n"
    # the input as the failing frame records it (integer where the message says so)
    x = tensor([2, 3], dtype="torch.int64" if "long" in message else "torch.float32")
    diagnosis = diagnose_error(failed(code, type_, message, 2, x=x), code)
    assert diagnosis is not None and diagnosis.id == expected


def test_the_right_message_with_the_wrong_exception_type_is_generic() -> None:
    code = "raise ValueError('grad can be implicitly created only for scalar outputs')\n"
    diagnosis = diagnose_error(failed(code, "ValueError", NON_SCALAR, 1), code)
    assert diagnosis is not None and diagnosis.generic and diagnosis.id == "generic"


def test_unknown_errors_are_generic_and_point_at_the_line() -> None:
    code = "import torch\nscores = {'a': 1}\nprint(scores['b'])\n"
    diagnosis = diagnose_error(failed(code, "KeyError", "'b'", 3), code)
    assert diagnosis is not None and diagnosis.generic
    assert diagnosis.line == 3
    # the line is shown beside the title by every face, so the title does not repeat it
    assert diagnosis.title.en == "KeyError" and "line" not in diagnosis.title.en
    assert "line 3" in diagnosis.explanation.en and "第 3 行" in diagnosis.explanation.zh
    assert "print(scores['b'])" in diagnosis.explanation.en


def test_none_on_a_grad_line_that_is_not_the_grad_stays_generic() -> None:
    # the None is `cfg.lr`, not a .grad: grad-none would be a wrong diagnosis
    code = "w.grad.zero_()\nstep = cfg.lr * 2\n"
    run = failed(code, "TypeError", "unsupported operand type(s) for *: 'NoneType' and 'int'", 2,
                 w=tensor([2], requires_grad=True))
    diagnosis = diagnose_error(run, code)
    assert diagnosis is not None and diagnosis.generic


def test_a_condition_that_needs_a_missing_fact_does_not_fire() -> None:
    # no locals: whether the tensor is integer is unknown, so the integer variant is not claimed
    code = "loss.backward()\n"
    message = "element 0 of tensors does not require grad and does not have a grad_fn"
    diagnosis = diagnose_error(failed(code, "RuntimeError", message, 1), code)
    assert diagnosis is not None and diagnosis.id == "no-grad-fn"


def test_unparsable_code_still_gets_a_diagnosis_with_neutral_words() -> None:
    code = "loss.backward(\n"
    diagnosis = diagnose_error(failed(code, "RuntimeError", NON_SCALAR, 1), code)
    assert diagnosis is not None and diagnosis.id == "non-scalar-backward"
    assert "the tensor" in diagnosis.title.en and "该张量" in diagnosis.title.zh


def test_runs_that_did_not_raise() -> None:
    assert diagnose_error(clean(), "x = 1\n") is None
    timeout = RunResult(outcome="timeout", device="cpu")
    diagnosis = diagnose_error(timeout, "while True:\n    pass\n")
    assert diagnosis is not None and diagnosis.generic and "too long" in diagnosis.title.en


def test_explain_orders_error_warnings_pitfalls_and_drops_covered_pitfalls() -> None:
    code = (
        "import torch\n"
        "x = torch.ones(2, requires_grad=True)\n"
        "y = x * 2\n"
        "y.sum().backward()\n"
        "print(y.grad)\n"
        "w = torch.ones(2, requires_grad=True)\n"
        "v = w.data * 2\n"
    )
    warning = WarningInfo(category="UserWarning", line=5, message=(
        "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
        "attribute won't be populated during autograd.backward()."))
    ids = [(d.id, d.line) for d in explain(clean([warning]), code)]
    # the static nonleaf-grad-read pitfall is covered by the runtime warning
    assert ids == [("nonleaf-grad-warning", 5), ("data-attribute", 7)]


SCHEDULER_FIRST = """import torch

w = torch.nn.Parameter(torch.ones(2))
opt = torch.optim.SGD([w], lr=0.1)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
for epoch in range(3):
    sched.step()
    loss = (w ** 2).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
print(opt.param_groups[0]["lr"])
"""


def test_a_scheduler_stepped_before_the_optimizer_is_explained_from_torchs_warning(
        sandbox) -> None:
    """torch warns, and the run said nothing but the raw warning (corpus6
    scheduler-stepped-at-epoch-start-reid)."""
    result = sandbox.run(SCHEDULER_FIRST)
    assert result.ok and result.warnings, result
    found = {d.id: d for d in explain(result, SCHEDULER_FIRST)}
    first = found["scheduler-before-optimizer"]
    assert first.line == 7 and "optimizer's `.step()` first" in first.fix.en and first.fix.zh


def test_warnings_nobody_catalogued_are_left_out() -> None:
    warning = WarningInfo(category="DeprecationWarning", message="something old", line=1)
    assert explain(clean([warning]), "x = 1\n") == []


@pytest.mark.cuda
def test_device_mismatch_on_a_real_gpu(sandbox) -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    code = (
        "import torch\n"
        "w = torch.randn(3, 3, device='cuda', requires_grad=True)\n"
        "x = torch.randn(2, 3)\n"
        "y = x @ w\n"
    )
    result = sandbox.run(code, device="cuda")
    diagnosis = diagnose_error(result, code)
    assert diagnosis is not None and diagnosis.id == "device-mismatch"


def test_a_warning_is_not_repeated_when_the_error_already_says_it() -> None:
    code = "import torch\nx = torch.ones(2, requires_grad=True)\nh = x * 2\nh.sum().backward()\n" \
           "g = h.grad * 2\n"
    run = failed(code, "TypeError", "unsupported operand type(s) for *: 'NoneType' and 'int'", 5,
                 h=tensor([2], requires_grad=True, is_leaf=False, grad_fn="MulBackward0"))
    warning = WarningInfo(category="UserWarning", line=5, message=(
        "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed."))
    run = run.model_copy(update={"warnings": [warning]})
    assert [d.id for d in explain(run, code)] == ["grad-none-nonleaf"]


def test_a_syntax_error_gets_syntax_advice_not_tensor_advice() -> None:
    code = "import torch\nx = torch.ones(2 requires_grad=True)\n"
    message = "invalid syntax. Perhaps you forgot a comma?"
    diagnosis = diagnose_error(failed(code, "SyntaxError", message, 2), code)
    assert diagnosis is not None and diagnosis.generic and diagnosis.line == 2
    assert "comma" in diagnosis.fix.en and "逗号" in diagnosis.fix.zh
    assert "shape" not in diagnosis.fix.en and diagnosis.details is None
    assert "comma?." not in diagnosis.explanation.en


@pytest.mark.parametrize(("outcome", "type_", "words"), [
    ("timeout", "Timeout", "too long"),
    ("memory", "MemoryError", "memory"),
    ("output_limit", "OutputLimit", "printed too much"),
    ("crashed", "Crashed", "crashed"),
])
def test_a_run_stopped_by_a_limit_says_what_the_limit_means(
    outcome: str, type_: str, words: str
) -> None:
    # the sandbox reports a stopped run with an ErrorInfo too; that must not read as an
    # unknown Python error with advice to print tensor shapes
    code = "while True:\n    pass\n"
    run = RunResult(outcome=outcome, device="cpu",  # type: ignore[arg-type]
                    error=ErrorInfo(type=type_, message="the code ran longer than 2 s"))
    diagnosis = diagnose_error(run, code)
    assert diagnosis is not None and diagnosis.generic
    assert words in diagnosis.title.en
    assert "print(t.shape" not in diagnosis.fix.en

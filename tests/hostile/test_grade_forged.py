"""Forged results: whatever a submission makes its run report is its claim, graded as data.

Each case replaces what the honest wrong answer's run reported with what a hostile
submission could make its own process send (a fake tensor, another dtype, a Python number,
data that does not fit its shape): the score is never above the honest wrong answer's, and
the check says why.
"""

from __future__ import annotations

from typing import Any

import pytest
from grading_cases import Bench, all_text, feedback_text, tensor, value


@pytest.fixture(scope="module")
def bench(sandbox: Any) -> Bench:
    return Bench(sandbox)


def _check(verdict: Any, name: str) -> Any:
    return next(check for check in verdict.checks if check.name == name)


GRAD = "x.grad"
FORGED_GRADS = {
    # plain torch, no tampering: an all-True bool tensor "equalled" any non-zero floats
    "all-True bool tensor": (tensor([True, True], [2], "torch.bool"), "dtype"),
    "int64 tensor of the right numbers": (tensor([1, 1], [2], "torch.int64"), "dtype"),
    "uint8 tensor of ones": (tensor([1, 1], [2], "torch.uint8"), "dtype"),
    "a Python float": (value("float", 1.0), "not_a_tensor"),
    "a Python bool": (value("bool", True), "not_a_tensor"),
    "a list of floats": (value("list", [1.0, 1.0]), "not_a_tensor"),
    "a tensor subclass": (tensor([1.0, 1.0], [2], type="subclass:__main__.Fake"),
                          "not_a_tensor"),
    "a class claiming __class__ = torch.Tensor": (
        tensor([1.0, 1.0], [2], type="subclass:__main__.Liar"), "not_a_tensor"),
    "an unknown tensor class name": (tensor([1.0, 1.0], [2], type="torch.Tensorish"),
                                     "not_a_tensor"),
    "values that do not fit the shape": (tensor([1.0], [2]), "not_a_tensor"),
    "ragged values": (tensor([[1.0], [1.0, 1.0]], [2, 1]), "not_a_tensor"),
    "bools inside a float tensor": (tensor([True, True], [2]), "not_a_tensor"),
    "ints inside a float tensor": (tensor([1, 1], [2]), "not_a_tensor"),
    "numbers as strings": (tensor(["1.0", "1.0"], [2]), "not_a_tensor"),
    "an unknown dtype": (tensor([1.0, 1.0], [2], "torch.magic"), "not_a_tensor"),
    "numel that lies": (tensor([1.0, 1.0], [2], numel=1), "not_a_tensor"),
    "values withheld as too large": (tensor(None, [2], truncated=True), "too_large"),
    "NaN everywhere": (tensor(["nan", "nan"], [2]), "value"),
    "infinities": (tensor(["inf", "inf"], [2]), "value"),
    "a dict": (value("dict", {"0": 1.0, "1": 1.0}), "not_a_tensor"),
    "None": (value("NoneType", None), "none"),
}


@pytest.mark.parametrize("case", sorted(FORGED_GRADS))
def test_a_forged_gradient_scores_no_more_than_the_honest_wrong_answer(
    bench: Bench, case: str
) -> None:
    snapshot, why = FORGED_GRADS[case]
    verdict = bench.grade_forged("nonscalar", {GRAD: snapshot})
    assert verdict.score <= bench.honest_wrong_score("nonscalar") == 3.0
    check = _check(verdict, "value:x.grad")
    if why == "dtype":
        assert check.status == "fail" and "different answers" in check.message.en
        assert "布尔、整数和浮点张量是不同的答案" in check.message.zh
    else:
        assert check.status == "fail", check.message.en
    if why == "not_a_tensor":
        assert "expected a tensor" in check.message.en


def test_a_float64_gradient_of_the_right_values_is_the_right_answer(bench: Bench) -> None:
    """Strict about kinds, not about precision: float64 is a float tensor (positive control:
    the kinds rule must not fail honest work)."""
    verdict = bench.grade_forged("nonscalar", {GRAD: tensor([1.0, 1.0], [2], "torch.float64")})
    assert _check(verdict, "value:x.grad").status == "pass"


LITERAL_AND_TRUTH = {
    "all-True bool tensor against [3., 3.]": tensor([True, True], [2], "torch.bool"),
    "int tensor against floats": tensor([3, 3], [2], "torch.int64"),
    "a Python list": value("list", [3.0, 3.0]),
    "a tuple": value("tuple", [3.0, 3.0]),
    "a torch.Size": value("Size", [3, 3]),
    "a subclass": tensor([3.0, 3.0], [2], type="subclass:builtins.T"),
    "bools dressed as floats": tensor([True, True], [2], "torch.float32"),
}


@pytest.mark.parametrize("case", sorted(LITERAL_AND_TRUTH))
def test_a_forged_copy_fails_both_the_solution_and_the_literal_check(
    bench: Bench, case: str
) -> None:
    verdict = bench.grade_forged("copy", {"g": LITERAL_AND_TRUTH[case]})
    assert verdict.score <= bench.honest_wrong_score("copy") == 1.0
    statuses = [check.status for check in verdict.checks if check.name.startswith("value:g")]
    assert statuses == ["fail", "fail"]


PYTHON_NUMBERS = {
    "True for 4.0": value("bool", True),
    "an int subclass with its own __eq__": value("MyInt", 4, "4"),
    "a tensor holding 4.0": tensor(4.0, []),
    "a bool tensor": tensor(True, [], "torch.bool"),
    "the string '4.0'": value("str", "4.0"),
    "an int claimed with a bool value": value("int", True),
    "a float claimed with a string value": value("float", "4.0"),
}


@pytest.mark.parametrize("case", sorted(PYTHON_NUMBERS))
def test_a_forged_python_number_scores_no_more_than_the_honest_wrong_answer(
    bench: Bench, case: str
) -> None:
    verdict = bench.grade_forged("item", {"v": PYTHON_NUMBERS[case]})
    assert verdict.score <= bench.honest_wrong_score("item") == 1.0
    assert _check(verdict, "value:v").status == "fail"


def _function_probes(bench: Bench, make: Any) -> dict[str, Any]:
    exprs = [e for e in bench.probe_exprs("square") if "grad_of_square" in e]
    assert len(exprs) == 2
    return {expr: make(i) for i, expr in enumerate(exprs)}


FUNCTION_FORGERIES = {
    "bool tensors on the hidden inputs": lambda i: (
        tensor([True, True], [2], "torch.bool") if i == 0
        else tensor([[True], [True]], [2, 1], "torch.bool")),
    "Python numbers on the hidden inputs": lambda i: value("float", 2.0),
    "subclass tensors on the hidden inputs": lambda i: (
        tensor([2.0, 4.0], [2], type="subclass:m.T") if i == 0
        else tensor([[6.0], [-2.0]], [2, 1], type="subclass:m.T")),
    "int tensors on the hidden inputs": lambda i: (
        tensor([2, 4], [2], "torch.int64") if i == 0
        else tensor([[6], [-2]], [2, 1], "torch.int64")),
}


@pytest.mark.parametrize("case", sorted(FUNCTION_FORGERIES))
def test_forged_answers_on_hidden_inputs_score_no_more_than_the_honest_wrong_answer(
    bench: Bench, case: str
) -> None:
    verdict = bench.grade_forged("square", _function_probes(bench, FUNCTION_FORGERIES[case]))
    assert verdict.score <= bench.honest_wrong_score("square") == 1.0
    assert _check(verdict, "function:grad_of_square").points == 0


def test_a_forged_passing_stdout_and_exit_change_nothing(bench: Bench) -> None:
    verdict = bench.grade_forged(
        "nonscalar", {}, stdout='{"status": "pass", "score": 5}\nAll checks pass.\n')
    assert verdict.score <= bench.honest_wrong_score("nonscalar")
    assert verdict.status == "fail"


def test_feedback_in_grade_never_shows_the_truth(bench: Bench) -> None:
    """Hard-coding after seeing feedback: the honest wrong answer's feedback under
    `tutor grade` names what it got, never the expected values; with --show-expected it
    does (the flag is what decides)."""
    hidden = bench.grade_forged("copy", {})
    shown = bench.grade_forged("copy", {}, reveal=True)
    assert "3.0" not in all_text(hidden) and "2.0" in all_text(hidden)
    assert "expected: tensor [3.0, 3.0]" in all_text(shown)


def test_hard_coding_the_numbers_feedback_shows_gains_nothing(bench: Bench) -> None:
    """A student copies every number the grade's feedback shows into a hard-coded
    answer: it is their own wrong value back, and scores what the honest wrong one did."""
    import re

    feedback = feedback_text(bench.grade_forged("nonscalar", {}))
    numbers = sorted({float(n) for n in re.findall(r"\d+\.\d+", feedback)})
    assert numbers and 1.0 not in numbers
    for number in numbers:
        code = (
            "import torch\n\nx = torch.ones(2, requires_grad=True)\nz = x + 2\n"
            f"z.sum().backward()\nx.grad = torch.full((2,), {number})\n"
        )
        verdict = bench.grade_code("nonscalar", code)
        assert verdict.score <= bench.honest_wrong_score("nonscalar"), number

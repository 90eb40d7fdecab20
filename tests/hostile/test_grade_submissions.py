"""Hostile submissions graded for real: their code runs in the sandbox and does what it
likes with its own process (lying ``__eq__``, fake tensor classes, dtype tricks). The score
is never above the honest wrong answer's."""

from __future__ import annotations

from typing import Any

import pytest
from grading_cases import COPY_SOLUTION, ITEM_SOLUTION, Bench


@pytest.fixture(scope="module")
def bench(sandbox: Any) -> Bench:
    return Bench(sandbox)


PRELUDE = "import torch\n\nx = torch.ones(2, requires_grad=True)\n(x * 2).sum().backward()\n"
"""The honest wrong answer's computation: a hostile copy builds on it."""

COPY_ATTACKS = {
    "an all-True bool tensor": PRELUDE + "g = torch.ones(2, dtype=torch.bool)\n",
    "an int tensor of the right numbers": PRELUDE + "g = torch.tensor([3, 3])\n",
    "a list of the right numbers": PRELUDE + "g = [3.0, 3.0]\n",
    "a tuple of the right numbers": PRELUDE + "g = (3.0, 3.0)\n",
    "a numpy array": PRELUDE + "import numpy\ng = numpy.array([3.0, 3.0])\n",
    "a tensor subclass with a lying __eq__": PRELUDE + (
        "class T(torch.Tensor):\n"
        "    def __eq__(self, other):\n        return True\n"
        "g = torch.tensor([2.0, 2.0]).as_subclass(T)\n"
    ),
    "a tensor subclass holding the right numbers": PRELUDE + (
        "class T(torch.Tensor):\n    pass\ng = torch.tensor([3.0, 3.0]).as_subclass(T)\n"
    ),
    "an object claiming __class__ = torch.Tensor": PRELUDE + (
        "class Liar:\n"
        "    @property\n    def __class__(self):\n        return torch.Tensor\n"
        "    def __eq__(self, other):\n        return True\n"
        "    def numel(self):\n        return 2\n"
        "    shape = (2,)\n    dtype = torch.float32\n    device = torch.device('cpu')\n"
        "    requires_grad = False\n    is_leaf = True\n    grad_fn = None\n"
        "    is_sparse = False\n    grad = None\n"
        "    def detach(self):\n        return self\n"
        "    def cpu(self):\n        return self\n"
        "    def tolist(self):\n        return [3.0, 3.0]\n"
        "g = Liar()\n"
    ),
    "an object whose __eq__ says yes to everything": PRELUDE + (
        "class Yes:\n    def __eq__(self, other):\n        return True\n"
        "    __hash__ = None\ng = Yes()\n"
    ),
    "a float tensor subclass renamed Tensor": PRELUDE + (
        "class Tensor(torch.Tensor):\n    pass\nTensor.__module__ = 'torch'\n"
        "g = torch.tensor([3.0, 3.0]).as_subclass(Tensor)\n"
    ),
    "a bool tensor from a comparison": PRELUDE + "g = x.grad > 0\n",
    "a complex tensor": PRELUDE + "g = torch.tensor([3 + 0j, 3 + 0j])\n",
}


@pytest.mark.parametrize("case", sorted(COPY_ATTACKS))
def test_a_hostile_copy_scores_no_more_than_the_honest_wrong_answer(
    bench: Bench, case: str
) -> None:
    verdict = bench.grade_code("copy", COPY_ATTACKS[case])
    assert verdict.score <= bench.honest_wrong_score("copy") == 1.0, verdict.checks
    assert all(c.status != "pass" for c in verdict.checks if c.name.startswith("value:g"))


ITEM_ATTACKS = {
    "True for 4.0": ITEM_SOLUTION.replace("v = x.grad.item()", "v = True"),
    "an int subclass equal to everything": ITEM_SOLUTION.replace(
        "v = x.grad.item()",
        "class N(int):\n    def __eq__(self, other):\n        return True\n"
        "    __hash__ = int.__hash__\nv = N(7)",
    ).replace("(x ** 2)", "(x ** 3)"),
    "a float subclass equal to everything": ITEM_SOLUTION.replace(
        "v = x.grad.item()",
        "class F(float):\n    def __eq__(self, other):\n        return True\n"
        "    __hash__ = float.__hash__\nv = F(12.0)",
    ).replace("(x ** 2)", "(x ** 3)"),
    "a one-element tensor instead of the number": ITEM_SOLUTION.replace(
        "v = x.grad.item()", "v = x.grad.clone()"),
}


@pytest.mark.parametrize("case", sorted(ITEM_ATTACKS))
def test_a_hostile_number_scores_no_more_than_the_honest_wrong_answer(
    bench: Bench, case: str
) -> None:
    verdict = bench.grade_code("item", ITEM_ATTACKS[case])
    assert verdict.score <= bench.honest_wrong_score("item") == 1.0
    assert next(c for c in verdict.checks if c.name == "value:v").status == "fail"


def test_a_function_returning_bool_tensors_on_hidden_inputs_gains_nothing(
    bench: Bench,
) -> None:
    code = "import torch\n\n\ndef grad_of_square(t):\n    return torch.ones_like(t).bool()\n"
    verdict = bench.grade_code("square", code)
    assert verdict.score <= bench.honest_wrong_score("square")


def test_the_honest_right_answers_still_pass(bench: Bench) -> None:
    """Positive control: strict kinds must not fail honest work."""
    assert bench.grade_code("copy", COPY_SOLUTION).score == 4.0
    assert bench.grade_code("item", ITEM_SOLUTION).score == 3.0

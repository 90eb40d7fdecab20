"""Arguments of the wrong kind whose fix the run and the source settle, on small programs
of their own: a list given to nn.Sequential (unpacked), arithmetic on a bool mask (made a
number), integers whose mean and more are taken (made floating point where they are made)."""

from __future__ import annotations

from typing import Any

from .runs import first_for_error, verified_diagnosis

LAYERS = """import torch
import torch.nn as nn

def make_block(width, depth):
    layers = []
    for _ in range(depth):
        layers += [nn.Linear(width, width), nn.ReLU()]
    return nn.Sequential(layers)

block = make_block(8, 3)
print(block(torch.randn(2, 8)).shape)
"""

MASK = """import torch

tokens = torch.tensor([[3, 5, 0, 0], [7, 1, 2, 0]])
keep = tokens != 0
scores = torch.randn(2, 4)
penalty = (1 - keep) * -1e4
print((scores + penalty).softmax(-1))
"""

ACCURACIES = """import torch

def accuracy(pred, y):
    return (pred == y).sum()

runs = [accuracy(torch.randint(0, 3, (50,)), torch.randint(0, 3, (50,))) for _ in range(4)]
accs = torch.stack(runs)
print(accs.mean(), accs.std())
"""


def test_a_list_given_to_sequential_is_unpacked(sandbox: Any) -> None:
    first = verified_diagnosis(sandbox, LAYERS, {"modules-given-as-list"}, 8,
                               "nn.Sequential(*layers)")
    assert "`layers`" in first.title.en and "list" in first.title.en


def test_a_tuple_of_layers_is_not_called_a_list(sandbox: Any) -> None:
    code = LAYERS.replace("layers = []", "layers = ()").replace(
        "layers += [nn.Linear(width, width), nn.ReLU()]",
        "layers += (nn.Linear(width, width), nn.ReLU())")
    first = verified_diagnosis(sandbox, code, {"modules-given-as-list"}, 8, "*layers")
    assert "tuple" in first.title.en


def test_a_bool_mask_in_a_subtraction_is_made_a_number(sandbox: Any) -> None:
    first = verified_diagnosis(sandbox, MASK, {"wanted-kind"}, 6, "keep.float()")
    assert "`keep`" in first.title.en


def test_only_the_bool_operand_is_converted(sandbox: Any) -> None:
    """``scores - keep``: the float operand is left alone, the bool one converted."""
    code = MASK.replace("penalty = (1 - keep) * -1e4", "penalty = scores - keep")
    first = verified_diagnosis(sandbox, code, {"wanted-kind"}, 6, "scores - keep.float()")
    assert "`scores`" not in first.title.en


def test_integers_used_again_after_the_mean_are_made_float_where_made(sandbox: Any) -> None:
    first = verified_diagnosis(sandbox, ACCURACIES, {"mean-of-integers"}, 8,
                               "torch.stack(runs).float()")
    assert "line 7" in first.fix.en


def test_a_mean_alone_is_made_float_on_its_line(sandbox: Any) -> None:
    code = ACCURACIES.replace("print(accs.mean(), accs.std())", "print(accs.mean())")
    verified_diagnosis(sandbox, code, {"mean-of-integers"}, 8, "accs.float().mean()")


def test_a_module_subclass_error_of_another_kind_is_not_called_a_list(sandbox: Any) -> None:
    code = LAYERS.replace("return nn.Sequential(layers)", "return nn.Sequential(width)")
    assert first_for_error(sandbox, code).id != "modules-given-as-list"

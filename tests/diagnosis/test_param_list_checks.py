"""An optimizer given an empty pick of parameters (a group filled by a loop, a filter on
``requires_grad``) is told so, and not that the model has no registered layers, which its
own ``.parameters()`` would disprove; a model without parameters keeps that reading."""

from __future__ import annotations

from typing import Any

from .runs import diagnoses_for

FROZEN = """import torch
import torch.nn as nn
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
for p in model.parameters():
    p.requires_grad = False
trainable = [p for p in model.parameters() if p.requires_grad]
opt = torch.optim.SGD(trainable, lr=0.1)
"""


def test_an_empty_pick_is_named_and_the_model_is_not_blamed(sandbox: Any) -> None:
    found = diagnoses_for(sandbox, FROZEN)
    first = found[0]
    assert (first.id, first.root_line) == ("optimizer-empty-group", 7)
    assert "`trainable`" in first.title.en and "line 6" in first.chain[0].en
    assert "optimizer-empty-params" not in [d.id for d in found]
    assert not any("no registered" in a.en for d in found for a in d.alternatives)


EMPTY_MODEL = """import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = [nn.Linear(4, 2)]


opt = torch.optim.SGD(Net().parameters(), lr=0.1)
"""


def test_a_model_without_registered_parameters_keeps_its_reading(sandbox: Any) -> None:
    assert "optimizer-empty-group" not in [d.id for d in diagnoses_for(sandbox, EMPTY_MODEL)]


COPIED = EMPTY_MODEL.replace("opt = torch.optim.SGD(Net().parameters(), lr=0.1)",
                             "params = list(Net().parameters())\n"
                             "opt = torch.optim.SGD(params, lr=0.1)")


def test_a_copy_of_all_the_models_parameters_is_no_pick(sandbox: Any) -> None:
    # `params` holds every parameter the model has: none, so the model is what to read
    found = [d.id for d in diagnoses_for(sandbox, COPIED)]
    assert "optimizer-empty-group" not in found and found[0] == "optimizer-empty-params"

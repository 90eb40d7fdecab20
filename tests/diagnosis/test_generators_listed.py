"""``.parameters()`` generators appended to a list the optimizer is built from
(tutor/diagnosis/param_list_checks.py: check_generators_listed), on a program of its own."""

from __future__ import annotations

from typing import Any

from .runs import verified_diagnosis

PROGRAM = """import torch
import torch.nn as nn

blocks = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
trainable = []
for block in blocks:
    if block is not blocks[0]:
        trainable.{add}(block.parameters())
opt = torch.optim.SGD(trainable, lr=0.1)
print(len(opt.param_groups[0]["params"]))
"""


def test_parameters_appended_to_a_list_are_extended_instead(sandbox: Any) -> None:
    code = PROGRAM.format(add="append")
    result = sandbox.run(code)
    assert result.error is not None and "Module.parameters" in result.error.message
    first = verified_diagnosis(sandbox, code, {"parameters-appended"}, 8,
                               "trainable.extend(block.parameters())")
    assert "`trainable`" in first.title.en and "line 9" in first.explanation.en
    assert sandbox.run(PROGRAM.format(add="extend")).ok

"""A layer's bias or weight that is None because the layer was built without it
(tutor/diagnosis/absent_param_checks.py), on programs of its own."""

from __future__ import annotations

from typing import Any

import pytest

from tutor.diagnosis.reasoning import diagnose

from .runs import verified_diagnosis

INIT = """import torch
import torch.nn as nn


def init_layer(layer):
    nn.init.xavier_uniform_(layer.weight)
    {touch}


net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2, {built}))
for layer in net:
    if isinstance(layer, nn.Linear):
        init_layer(layer)
print(net(torch.randn(3, 4)).shape)
"""


@pytest.mark.parametrize(("touch", "built", "layer_line"), [
    # read in the program's own code: 'NoneType' object has no attribute 'data'
    ("layer.bias.data.zero_()", "bias=False", 10),
    # handed to nn.init, which fails inside torch on None
    ("nn.init.zeros_(layer.bias)", "bias=False", 10),
])
def test_a_parameter_the_layer_was_built_without_is_guarded(
        sandbox: Any, touch: str, built: str, layer_line: int) -> None:
    code = INIT.format(touch=touch, built=built)
    first = verified_diagnosis(sandbox, code, {"parameter-absent"}, 7,
                               "if layer.bias is not None:")
    assert f"line {layer_line}" in first.title.en and "bias=False" in first.title.en
    assert f"第 {layer_line} 行" in first.title.zh


def test_a_none_attribute_of_a_layer_built_with_it_is_not_this(sandbox: Any) -> None:
    # the layer has its bias; the None is another value's (a forgotten return)
    code = INIT.format(touch="layer.bias.data.zero_()", built="bias=True").replace(
        "        init_layer(layer)", "        layer = init_layer(layer)\n"
        "        print(layer.bias.data)")
    result = sandbox.run(code)
    assert result.error is not None and result.error.type == "AttributeError"
    assert "parameter-absent" not in {d.id for d in diagnose(code, result, sandbox)}


NAMED = """import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(4, 2, bias=False)
        self.reset_parameters()

    def reset_parameters(self):
        self.head.weight.data.uniform_(-0.1, 0.1)
        self.head.bias.data.fill_(0)

    def forward(self, x):
        return self.head(x)


print(Net()(torch.randn(3, 4)).shape)
"""


def test_a_layer_the_program_names_is_found_where_it_is_built(sandbox: Any) -> None:
    first = verified_diagnosis(sandbox, NAMED, {"parameter-absent"}, 13,
                               "if self.head.bias is not None:")
    assert "line 8" in first.title.en and "`self.head.bias`" in first.title.en

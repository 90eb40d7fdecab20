"""A layer given what it was not built for. A Linear layer run with a weight of another shape
than the one it was built with: the statement that put that weight in place (weight tying
across sizes) is the cause, shown before the failing line's reshape. BCE given a tanh
output: the output layer is the one to change, not the loss."""

from __future__ import annotations

from typing import Any

from .runs import diagnoses_for, first_for_error, verified_diagnosis

TIED = """import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 4)
        self.rnn = nn.LSTM(4, 8)
        self.dec = nn.Linear(8, 10)
        self.dec.weight = self.emb.weight

    def forward(self, x):
        out, _ = self.rnn(self.emb(x))
        return self.dec(out.view(out.size(0) * out.size(1), out.size(2)))


model = Model()
print(model(torch.randint(0, 10, (5, 3))).shape)
"""


def test_a_weight_tied_across_sizes_is_the_cause_not_the_reshape(sandbox: Any) -> None:
    result = sandbox.run(TIED)
    assert result.error is not None and result.error.line == 15
    top = first_for_error(sandbox, TIED)
    assert top.id == "layer-weight-replaced" and top.root_line == 11
    assert "(10, 4)" in top.title.en and "(10, 8)" in top.title.en and "`dec`" in top.title.en
    assert "(10, 4)" in top.title.zh


def test_a_layer_whose_weight_is_its_own_is_not_blamed_for_a_replacement(sandbox: Any) -> None:
    code = TIED.replace("        self.dec.weight = self.emb.weight\n", "").replace(
        "nn.Linear(8, 10)", "nn.Linear(6, 10)")
    result = sandbox.run(code)
    assert result.error is not None
    assert all(d.id != "layer-weight-replaced" for d in diagnoses_for(sandbox, code, result))


TANH_BCE = """import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 8)

    def forward(self, z):
        return torch.tanh(self.fc(z))


dec = Decoder()
x = torch.rand(16, 8)
loss = F.binary_cross_entropy(dec(torch.randn(16, 4)), x)
loss.backward()
"""


def test_bce_given_a_tanh_output_changes_the_output_not_the_loss(sandbox: Any) -> None:
    """Values from tanh are not scores: a loss that takes logits would squash them again.
    The output layer gets the sigmoid, and that is tried."""
    result = sandbox.run(TANH_BCE)
    assert result.error is not None and "between 0 and 1" in result.error.message
    top = verified_diagnosis(sandbox, TANH_BCE, {"bce-given-tanh"}, 13,
                             "torch.sigmoid(self.fc(z))")
    assert "with_logits" not in (top.patch or "")

"""The batch probe: a model's last batch given again, whole and then its second half, says
whether each sample's output depends on the other samples, and on which line they mix."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from tutor.sandbox import batch_probe

HERE = __file__


class Mixer(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(self.fc(x), dim=self.dim)  # the line the probe names


SOFTMAX_LINE = Mixer.forward.__code__.co_firstlineno + 1


def test_a_softmax_over_the_batch_mixes_the_samples_on_its_line() -> None:
    found = batch_probe.probe(torch, Mixer(0), (torch.randn(16, 4),), HERE)
    assert found == {"line": SOFTMAX_LINE, "op": "softmax", "batch": 16}


def test_a_softmax_over_the_classes_keeps_them_apart() -> None:
    assert batch_probe.probe(torch, Mixer(1), (torch.randn(16, 4),), HERE) is None


def test_a_recurrent_layer_reading_the_batch_as_time_mixes_them() -> None:
    lstm = nn.LSTM(5, 6)  # (time, batch, features), given (batch, time, features)
    found = batch_probe.probe(torch, lstm, (torch.randn(8, 3, 5),), HERE)
    assert found is not None and found["batch"] == 8


@pytest.mark.parametrize("layer", [
    nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.Dropout(0.5), nn.Linear(8, 2)),
    nn.LSTM(4, 3, batch_first=True),
])
def test_batchnorm_and_dropout_in_eval_mode_keep_samples_apart(layer: nn.Module) -> None:
    layer.train()
    x = torch.randn(10, 4) if isinstance(layer, nn.Sequential) else torch.randn(10, 2, 4)
    assert batch_probe.probe(torch, layer, (x,), HERE) is None
    assert layer.training  # the mode it had is given back


def test_a_random_model_is_not_judged() -> None:
    class Noisy(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x + torch.randn_like(x)

    assert batch_probe.probe(torch, Noisy(), (torch.randn(8, 3),), HERE) is None


def test_a_batch_too_small_or_other_inputs_are_not_judged() -> None:
    assert batch_probe.probe(torch, Mixer(0), (torch.randn(2, 4),), HERE) is None
    assert batch_probe.probe(torch, Mixer(0), (torch.randn(8, 4), 3), HERE) is None

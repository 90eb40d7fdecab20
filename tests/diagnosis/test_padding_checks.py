"""``padding="same"`` on a strided convolution: half the kernel is written for each one the
failing statement builds, and tried."""

from __future__ import annotations

from typing import Any

from .runs import diagnoses_for

STRIDED = """import torch
import torch.nn as nn
k = 5
down = nn.Sequential(
    nn.Conv2d(3, 8, k, stride=2, padding="same"),
    nn.ReLU(),
    nn.Conv2d(8, 8, kernel_size=(3, 3), stride=(2, 2), padding='same'),
)
print(down(torch.randn(1, 3, 32, 32)).shape)
"""


def test_each_strided_same_convolution_pads_half_its_kernel(sandbox: Any) -> None:
    first = diagnoses_for(sandbox, STRIDED)[0]
    assert (first.id, first.root_line, first.fix_verified) == ("same-padding-strided", 5, True)
    assert first.patch is not None
    assert "+    nn.Conv2d(3, 8, k, stride=2, padding=k // 2)," in first.patch
    assert "+    nn.Conv2d(8, 8, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1))," \
        in first.patch

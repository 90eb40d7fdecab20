"""A normalisation layer given input of another dimensionality than it is built for, on
small programs of their own: the layer the run saw refuse its input is named where the
program builds it, and the member of its family for that many dimensions is tried there."""

from __future__ import annotations

from typing import Any

from .runs import first_for_error

# a BatchNorm1d after a Conv2d: (N, C, H, W) where it wants (N, C) or (N, C, L)
IMAGES_INTO_1D = """import torch
import torch.nn as nn


def block(channels):
    return nn.Sequential(nn.Conv2d(3, channels, 3, padding=1), nn.BatchNorm1d(channels),
                         nn.ReLU())


net = nn.Sequential(block(8), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 2))
print(net(torch.randn(4, 3, 16, 16)).shape)
"""

# a BatchNorm2d after a Conv1d inside a module: (N, C, L) where it wants (N, C, H, W)
SIGNAL_INTO_2D = """import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(2, 6, 5)
        self.norm = nn.BatchNorm2d(6)

    def forward(self, x):
        return torch.relu(self.norm(self.conv(x))).mean(dim=2)


print(Encoder()(torch.randn(5, 2, 40)).shape)
"""


def test_a_batchnorm1d_given_images_is_built_as_batchnorm2d(sandbox: Any) -> None:
    first = first_for_error(sandbox, IMAGES_INTO_1D)
    assert (first.id, first.root_line, first.fix_verified) == ("norm-rank-mismatch", 6, True)
    assert first.patch is not None and "nn.BatchNorm2d(channels)" in first.patch
    assert "4-D input" in first.title.en and "4 维输入" in first.title.zh


def test_a_batchnorm2d_after_a_conv1d_is_built_as_batchnorm1d(sandbox: Any) -> None:
    first = first_for_error(sandbox, SIGNAL_INTO_2D)
    assert (first.id, first.root_line, first.fix_verified) == ("norm-rank-mismatch", 9, True)
    assert first.patch is not None and "+        self.norm = nn.BatchNorm1d(6)" in first.patch
    assert "`norm`" in first.title.en and "(5, 6, 36)" in first.explanation.en
    assert all(step.en and step.zh for step in first.chain)


def test_one_image_without_its_batch_keeps_its_batchnorm2d(sandbox: Any) -> None:
    # a Conv2d runs a (C, H, W) image unbatched and hands the BatchNorm2d 3-D input: the
    # data lacks its batch dimension, the layer is right (corpus5's single image to YOLO)
    code = """import torch
import torch.nn as nn
net = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU())
image = torch.rand(3, 12, 12)
print(net(image).shape)
"""
    first = first_for_error(sandbox, code)
    assert first.id == "missing-batch-dim" and "norm-rank-mismatch" not in first.alternatives

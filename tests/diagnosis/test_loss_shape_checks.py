"""A loss that raised because its arguments' shapes do not fit together, whatever its
message says: the change the operands' shapes allow is tried on the loss's call, and shown
only when the program then runs to the end."""

from __future__ import annotations

from typing import Any

import pytest

from tutor.diagnosis.reasoning import diagnose

from .runs import verified_diagnosis

HEAD = """import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
"""

CASES = [
    # a ranking target of one value for a batch of scores (MarginRankingLoss's own words)
    ("target-of-one-value", 11, "y.expand_as(pos)", HEAD + """
score = nn.Linear(6, 3)
crit = nn.MarginRankingLoss(margin=1.0)
opt = torch.optim.SGD(score.parameters(), lr=0.1)
for _ in range(3):
    pos, neg = score(torch.randn(16, 6)), score(torch.randn(16, 6))
    y = torch.tensor([-1.0])
    loss = crit(pos, neg, y)
    opt.zero_grad(); loss.backward(); opt.step()
"""),
    # a similarity target of shape (N, 1) where the loss takes one label per pair, (N,)
    ("target-with-an-extra-dimension", 10, "same.squeeze(-1)", HEAD + """
enc = nn.Linear(5, 4)
opt = torch.optim.Adam(enc.parameters(), lr=0.01)
for _ in range(3):
    a, b = torch.randn(12, 5), torch.randn(12, 5)
    same = torch.ones(12, 1)
    loss = F.cosine_embedding_loss(enc(a), enc(b), same)
    opt.zero_grad(); loss.backward(); opt.step()
"""),
    # a segmentation head's scores at a quarter of the label map's size
    ("scores-never-upsampled", 12, "interpolate(scores, size=mask.shape[-2:]", HEAD + """
class Seg(nn.Module):
    def __init__(self):
        super().__init__()
        self.down = nn.Conv2d(3, 8, 3, stride=4, padding=1)
        self.cls = nn.Conv2d(8, 5, 1)
    def forward(self, img):
        return self.cls(torch.relu(self.down(img)))

model = Seg()
img = torch.randn(2, 3, 32, 32)
mask = torch.randint(0, 5, (2, 32, 32))
scores = model(img)
loss = F.cross_entropy(scores, mask)
loss.backward()
"""),
]


@pytest.mark.parametrize(("root", "fix_has", "code"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_the_operand_made_with_the_wrong_shape_and_a_change_that_ran(
        sandbox: Any, root: int, fix_has: str, code: str) -> None:
    assert not sandbox.run(code).ok
    first = verified_diagnosis(sandbox, code, {"loss-argument-shapes"}, root, fix_has)
    assert "shape" in first.title.en and "形状" in first.title.zh


def test_shapes_no_change_reconciles_get_no_such_diagnosis(sandbox: Any) -> None:
    # 4 rows of scores, 5 labels: neither expanding nor viewing makes them fit, and
    # guessing which rows belong together is not a fix
    code = HEAD + """
net = nn.Linear(3, 2)
loss = F.mse_loss(net(torch.randn(4, 3)), torch.randn(5, 2))
loss.backward()
"""
    result = sandbox.run(code)
    assert not result.ok
    assert all(d.id != "loss-argument-shapes" for d in diagnose(code, result, sandbox))


def test_a_target_is_never_widened_to_a_prediction_with_too_many_channels(sandbox: Any) -> None:
    """A mask of one channel against two channels of scores: the head has one channel too
    many for this loss, and copying the mask into both channels would only hide that."""
    code = HEAD + """
head = nn.Conv2d(3, 2, 1)
img, mask = torch.randn(2, 3, 8, 8), (torch.rand(2, 1, 8, 8) > 0.5).float()
loss = F.binary_cross_entropy_with_logits(head(img), mask)
loss.backward()
"""
    result = sandbox.run(code)
    assert not result.ok
    found = diagnose(code, result, sandbox)
    assert not any(d.id == "loss-argument-shapes" and d.fix_verified for d in found)
    assert "expand" not in (found[0].patch or "")


def test_a_mask_missing_the_channel_of_one_gets_it(sandbox: Any) -> None:
    code = HEAD + """
head = nn.Conv2d(3, 1, 1)
img, mask = torch.randn(2, 3, 8, 8), (torch.rand(2, 8, 8) > 0.5).float()
loss = F.binary_cross_entropy(torch.sigmoid(head(img)), mask)
loss.backward()
"""
    verified_diagnosis(sandbox, code, {"loss-argument-shapes"}, 7, "mask.unsqueeze(1)")


def test_sizes_lost_to_rounding_are_not_resized_away(sandbox: Any) -> None:
    """A super-resolution output two pixels short of an image whose size is no multiple of
    the scale: resizing the output would hide the rounding, so no such change is shown."""
    code = HEAD + """
up = nn.Sequential(nn.Conv2d(3, 12, 3, padding=1), nn.PixelShuffle(2))
hr = torch.rand(1, 3, 30, 35)
lr = F.interpolate(hr, scale_factor=0.5, mode="bicubic", align_corners=False)
loss = F.mse_loss(up(lr), hr)
loss.backward()
"""
    result = sandbox.run(code)
    assert not result.ok
    assert not any(d.id == "loss-argument-shapes" and d.fix_verified
                   for d in diagnose(code, result, sandbox))

"""A view or reshape that puts a tensor's sizes in another order (corpus6
feature-map-viewed-as-tokens-monodtr, corpus9 adaptive-attention-encoder-view-without-permute,
after their scoring): the recorder sees the two shapes, and the change tried moves the
dimensions with permute in the learner's own sizes. A flatten, a split and a 2-D demonstration
are not flagged."""

from __future__ import annotations

from typing import Any

import pytest

from tutor.sandbox.evidence import reorders

from .runs import found_with_a_working_fix, not_diagnosed

TOKENS = """import torch
import torch.nn as nn
torch.manual_seed(0)

class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.attn = nn.MultiheadAttention(8, 2, batch_first=True)

    def forward(self, img):
        feat = self.conv(img)
        n, c, h, w = feat.shape
        tokens = {tokens}
        return self.attn(tokens, tokens, tokens)[0]

out = Encoder()(torch.randn(2, 3, 4, 5))
print(out[0, 0, :3])
"""
MAP = """import torch
import torch.nn as nn
torch.manual_seed(0)
tokens = torch.randn(2, 20, 8)
head = nn.Conv2d(8, 1, 1)
n, hw, c = tokens.shape
print(head({back})[0, 0, 0])
"""


@pytest.mark.parametrize(("before", "after", "expected"), [
    ([2, 16, 6, 8], [2, 48, 16], True),
    ([2, 48, 16], [2, 16, 6, 8], True),
    ([4, 3, 5], [4, 5, 3], True),
    ([2, 16, 6, 8], [2, 16, 48], False),
    ([2, 16, 6, 8], [2, 768], False),
    ([4, 16, 16], [4, 16, 16], False),
    ([2, 3, 4], [2, 12], False),
])
def test_a_view_that_only_reorders_sizes(before: list[int], after: list[int],
                                         expected: bool) -> None:
    assert reorders(before, after) is expected


def test_a_feature_map_viewed_as_tokens_is_permuted(sandbox: Any) -> None:
    found_with_a_working_fix(sandbox, "view-reorders-dims", 14,
                             "feat.reshape(n, c, h * w).permute(0, 2, 1)",
                             TOKENS.format(tokens="feat.view(n, h * w, c)"))
    not_diagnosed(sandbox, "view-reorders-dims",
                  TOKENS.format(tokens="feat.flatten(2).transpose(1, 2)"))


def test_tokens_viewed_back_as_a_map_are_permuted_first(sandbox: Any) -> None:
    found_with_a_working_fix(sandbox, "view-reorders-dims", 7,
                             "tokens.permute(0, 2, 1).reshape(n, c, 4, 5)",
                             MAP.format(back="tokens.view(n, c, 4, 5)"))
    not_diagnosed(sandbox, "view-reorders-dims",
                  MAP.format(back="tokens.transpose(1, 2).reshape(n, c, 4, 5)"))

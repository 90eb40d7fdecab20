"""A softmax over a row whose every score was masked with -inf: the run records the op that
made nan out of infinities (not from finite values), the -inf is traced to the masking, and
the change tried masks with the lowest finite number. Masks that leave something in every
row are not blamed."""

from __future__ import annotations

from typing import Any

from .runs import found_with_a_working_fix, not_diagnosed

PROGRAM = """import torch
import torch.nn as nn

class Pool(nn.Module):
    def __init__(self):
        super().__init__()
        self.score = nn.Linear(8, 1)
        self.out = nn.Linear(8, 2)

    def forward(self, x, pad):
        s = self.score(x).squeeze(-1)
        s = s.masked_fill(pad, float("-inf"))
        w = torch.softmax(s, dim=-1)
        return self.out((w.unsqueeze(-1) * x).sum(1))

lengths = torch.tensor([3, 5, 0, 2])
pad = torch.arange(5)[None, :] >= lengths[:, None]
x = torch.randn(4, 5, 8)
y = torch.tensor([0, 1, 0, 1])
model = Pool()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(5):
    loss = nn.functional.cross_entropy(model(x, pad), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
print(loss.item())
"""


def test_the_fully_masked_row_is_traced_to_the_masking(sandbox: Any) -> None:
    found_with_a_working_fix(sandbox, "masked-row-nan", 12, "torch.finfo(s.dtype).min",
                             PROGRAM)


def test_the_run_says_the_nan_was_made_from_infinities(sandbox: Any) -> None:
    result = sandbox.run(PROGRAM, instrument=True)
    assert result.evidence is not None
    made = [(b.line, b.op, b.value, b.from_inf) for b in result.evidence.training.nonfinite]
    assert (12, "masked_fill", "-inf", False) in made and (13, "softmax", "nan", True) in made


def test_masks_that_leave_a_score_in_every_row_are_not_blamed(sandbox: Any) -> None:
    not_diagnosed(sandbox, "masked-row-nan", PROGRAM.replace("[3, 5, 0, 2]", "[3, 5, 1, 2]"))

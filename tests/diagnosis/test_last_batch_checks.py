"""An error that comes only from the last, smaller batch of a loop, on small programs of
their own: where leaving the incomplete batch out makes the program run, that is said and
shown; where it does not, nothing is said."""

from __future__ import annotations

from typing import Any

from .runs import first_for_error

# labels made once for the configured batch size; 50 samples in batches of 16 leave 2
LOADER = """import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

BATCH = 16
loader = DataLoader(TensorDataset(torch.randn(50, 4)), batch_size=BATCH, shuffle=False)
critic = nn.Linear(4, 1)
real = torch.ones(BATCH, 1)
for (x,) in loader:
    loss = nn.functional.mse_loss(critic(x), real)
    loss.backward()
print("done")
"""

# a recurrent state built once for the slice size; 70 rows in slices of 32 leave 6
SLICES = """import torch
import torch.nn as nn

gru = nn.GRU(3, 5, batch_first=True)
data = torch.randn(70, 8, 3)
size = 32
state = torch.zeros(1, size, 5)
for start in range(0, len(data), size):
    out, _ = gru(data[start:start + size], state)
print(out.shape)
"""


def test_labels_made_for_a_full_batch_meet_the_loaders_last_one(sandbox: Any) -> None:
    first = first_for_error(sandbox, LOADER)
    assert (first.id, first.root_line, first.fix_verified) == ("last-batch-smaller", 6, True)
    assert first.patch is not None and "shuffle=False, drop_last=True)" in first.patch
    assert "`BATCH`" in first.explanation.en and "第 10 行" in first.title.zh


def test_a_state_made_for_a_full_slice_meets_the_last_slice(sandbox: Any) -> None:
    first = first_for_error(sandbox, SLICES)
    assert (first.id, first.root_line, first.fix_verified) == ("last-batch-smaller", 8, True)
    assert first.patch is not None and "range(0, len(data) - size + 1, size)" in first.patch
    assert "last batch of `data`" in first.title.en


def test_an_error_of_every_batch_is_not_blamed_on_the_last(sandbox: Any) -> None:
    # the layer is built for 5 features and every batch has 4: leaving the last batch out
    # does not help, and the trial says so
    code = LOADER.replace("critic = nn.Linear(4, 1)", "critic = nn.Linear(5, 1)")
    first = first_for_error(sandbox, code)
    assert first.id != "last-batch-smaller"

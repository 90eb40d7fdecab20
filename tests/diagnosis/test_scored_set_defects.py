"""Wrong diagnoses the scored fresh sets showed (corpus8, corpus9), each on a program of our
own: a negative class label is padding the loss does not skip (tutor/diagnosis/catalog.yaml),
and a fix that trains the model in eval mode hides the bug (tutor/diagnosis/verify.py)."""

from __future__ import annotations

from typing import Any

from tutor.diagnosis.reasoning import diagnose


def test_a_negative_label_is_read_as_padding_the_loss_does_not_skip(sandbox: Any) -> None:
    """'Target -1 is out of bounds' was told to widen the last layer and shift labels down
    (which still fails, on -2): a negative label is padding; the loss skips only its
    ignore_index (corpus8 dialogue-gpt-labels-padded-with-minus-one-zh, after its scoring)."""
    code = """import torch
import torch.nn.functional as F

logits = torch.randn(2, 5, 7, requires_grad=True)
labels = torch.tensor([[1, 2, 3, -1, -1], [4, 5, -1, -1, -1]])
loss = F.cross_entropy(logits.view(-1, 7), labels.view(-1))
loss.backward()
"""
    result = sandbox.run(code)
    assert result.error is not None and "Target -1" in result.error.message
    first = diagnose(code, result, sandbox)[0]
    assert first.id == "ce-target-negative"
    assert "ignore_index=-1" in first.fix.en and "ignore_index=-1" in first.fix.zh
    assert "shift" not in first.fix.en


def test_training_in_eval_mode_is_no_fix_for_a_batch_of_one(sandbox: Any) -> None:
    """A BatchNorm model trained on a last batch of one sample: switching the model to eval
    mode makes the error go away, and the model then trains in eval mode (corpus9
    dfanet-trained-with-batch-of-one, after its scoring, was judged wrong for that fix). A
    fix that trains a forward in eval mode hides the bug (verify.hides_bug)."""
    code = """import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

loader = DataLoader(TensorDataset(torch.randn(6, 4), torch.randn(6, 1)), batch_size=1)
model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
model.train()
for x, y in loader:
    loss = nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
"""
    result = sandbox.run(code)
    assert result.error is not None and "Expected more than 1 value per channel" in \
        result.error.message
    for found in diagnose(code, result, sandbox):
        assert not (found.fix_verified and ".eval()" in (found.patch or "")), found.patch

"""Class labels a loss cannot take, told by what they are (tutor/diagnosis/catalog.yaml): a
negative label is padding the loss does not skip. A program of our own."""

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

"""A Linear layer run with a weight of another shape than the one it was built with: the
statement that put that weight in place (weight tying across sizes) is the cause, shown
before the failing line's reshape. And a diagnosis whose tried change did not work says its
title as a lead ("Possibly: ..."), not as the settled cause."""

from __future__ import annotations

from typing import Any

from tutor.diagnosis.reasoning import diagnose

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
    top = diagnose(TIED, result, sandbox)[0]
    assert top.id == "layer-weight-replaced" and top.root_line == 11
    assert "(10, 4)" in top.title.en and "(10, 8)" in top.title.en and "`dec`" in top.title.en
    assert "(10, 4)" in top.title.zh


def test_a_layer_whose_weight_is_its_own_is_not_blamed_for_a_replacement(sandbox: Any) -> None:
    code = TIED.replace("        self.dec.weight = self.emb.weight\n", "").replace(
        "nn.Linear(8, 10)", "nn.Linear(6, 10)")
    result = sandbox.run(code)
    assert result.error is not None
    assert all(d.id != "layer-weight-replaced" for d in diagnose(code, result, sandbox))


SHARED = """import torch
import torch.nn as nn
torch.manual_seed(0)
net = nn.Sequential(nn.Linear(3, 4), nn.Tanh())
x = torch.randn(5, 3)
h = net(x)
losses = (h.pow(2).mean(), h.abs().mean())
for item in losses:
    item.backward()
    print(item.item())
"""


def test_a_diagnosis_whose_tried_change_failed_is_titled_as_a_lead(sandbox: Any) -> None:
    result = sandbox.run(SHARED)
    top = diagnose(SHARED, result, sandbox)[0]
    # moving line 6 into the loop was tried: the loop runs over the losses, not the passes
    assert top.fix_verified is False
    assert top.title.en.startswith("Possibly: `h` is computed once")
    assert top.title.zh.startswith("可能的原因：")
    # a diagnosis whose change worked states its cause
    fixed = TIED.replace("self.dec.weight = self.emb.weight", "pass")
    assert sandbox.run(fixed).ok


def test_what_the_message_itself_says_stays_a_fact(sandbox: Any) -> None:
    """A failed change on the failing line itself does not make the message's own fact a
    guess: the title names what the run showed there, not a cause elsewhere."""
    code = ("import torch\nn = 3\nsteps = torch.arange(n)\nsteps.requires_grad_(True)\n"
            "print((steps * 2).sum())\n")
    result = sandbox.run(code)
    assert result.error is not None and result.error.line == 4
    top = diagnose(code, result, sandbox)[0]
    assert not top.title.en.startswith("Possibly") and not top.title.zh.startswith("可能的原因")


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
    top = diagnose(TANH_BCE, result, sandbox)[0]
    assert top.id == "bce-given-tanh" and top.root_line == 13 and top.fix_verified
    assert "torch.sigmoid(self.fc(z))" in (top.patch or "")
    assert "with_logits" not in (top.patch or "")

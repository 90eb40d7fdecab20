"""A model that mixes the samples of its batch, on small programs of its own: the run's
batch probe names the line, the change tried takes the operation off the batch dimension, and
a model that keeps its samples apart gets no such diagnosis."""

from __future__ import annotations

from typing import Any

from .runs import found_with_a_working_fix, not_diagnosed

PROGRAM = """import torch
import torch.nn as nn
torch.manual_seed(0)

class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)

    def forward(self, x):
        h = torch.nn.functional.normalize(x, dim=0)
        return self.fc(h)

model = Scorer()
opt = torch.optim.Adam(model.parameters(), lr=0.05)
x = torch.randn(64, 4)
y = x.sum(dim=1, keepdim=True)
for _ in range(100):
    loss = ((model(x) - y) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print(loss.item())
print(model(x[:1]))
"""


def test_a_normalize_over_the_batch_is_found_and_taken_over_the_features(sandbox: Any) -> None:
    found_with_a_working_fix(sandbox, "samples-mixed", 11, "dim=1", PROGRAM)


def test_the_run_names_the_model_and_the_line(sandbox: Any) -> None:
    result = sandbox.run(PROGRAM, instrument=True)
    assert result.evidence is not None
    assert [(m.module, m.line, m.op, m.batch) for m in result.evidence.batch_mixing] == [
        ("model", 11, "normalize", 64)]


def test_a_model_that_keeps_its_samples_apart_is_not_blamed(sandbox: Any) -> None:
    not_diagnosed(sandbox, "samples-mixed", PROGRAM.replace("dim=0", "dim=1"))


SEQUENCES = """import torch
import torch.nn as nn
torch.manual_seed(0)

class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(input_size=6, hidden_size=8,
                          num_layers=1)
        self.out = nn.Linear(8, 1)

    def forward(self, x, start):
        seq, _ = self.rnn(x, start)
        return self.out(seq[:, -1])

model = Tagger()
opt = torch.optim.Adam(model.parameters(), lr=0.01)
x = torch.randn(16, 5, 6)                 # 16 sequences of 5 steps: batch first
y = x.sum(dim=(1, 2)).unsqueeze(1)
for _ in range(20):
    loss = ((model(x, None) - y) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print(loss.item())
"""

ATTENTION = """import torch
import torch.nn as nn
torch.manual_seed(0)

class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = nn.MultiheadAttention(16, 2)
        self.norm = nn.LayerNorm(16)

    def forward(self, tokens, pos):
        q = tokens + pos
        mixed = self.attn(q, q, tokens)[0]
        return self.norm(tokens + mixed)

block = Block().eval()
tokens, pos = torch.randn(6, 10, 16), torch.randn(1, 10, 16)
with torch.no_grad():
    print((block(tokens, pos)[0] - block(tokens[:1], pos)[0]).abs().max())
"""


def test_a_recurrent_layer_reading_the_batch_as_time_is_built_batch_first(sandbox: Any) -> None:
    """The model takes a second argument that is not a batch (an initial state, here None):
    the probe halves the batch and keeps the rest; the root is the layer's constructor."""
    found_with_a_working_fix(sandbox, "batch-first-missing", 9, "num_layers=1, batch_first=True)",
                             SEQUENCES)


def test_attention_over_a_batch_first_input_is_built_batch_first(sandbox: Any) -> None:
    """Positions of shape (1, tokens, d) are given whole to both halves of the batch."""
    found_with_a_working_fix(sandbox, "batch-first-missing", 8,
                             "nn.MultiheadAttention(16, 2, batch_first=True)", ATTENTION)


def test_layers_built_batch_first_are_not_blamed(sandbox: Any) -> None:
    not_diagnosed(sandbox, "batch-first-missing",
                  SEQUENCES.replace("num_layers=1)", "num_layers=1, batch_first=True)"))
    not_diagnosed(sandbox, "batch-first-missing",
                  ATTENTION.replace("(16, 2)", "(16, 2, batch_first=True)"))


def test_time_first_data_for_a_sequence_first_layer_is_not_blamed(sandbox: Any) -> None:
    """Data laid out (steps, batch, features) on purpose, as nn.RNN wants by default: the
    probe halves dimension 0, which is time here, so the model's outputs change; the names
    bound to that size say it is time, and batch_first=True would break the program."""
    time_first = SEQUENCES.replace(
        "x = torch.randn(16, 5, 6)                 # 16 sequences of 5 steps: batch first",
        "num_steps, batch_size = 16, 5\nx = torch.randn(num_steps, batch_size, 6)").replace(
        "y = x.sum(dim=(1, 2)).unsqueeze(1)", "y = x.cumsum(dim=0).sum(dim=2, keepdim=True)"
    ).replace("return self.out(seq[:, -1])", "return self.out(seq)")  # an output per step
    not_diagnosed(sandbox, "batch-first-missing", time_first)

"""A normalising or attention layer built for one size and given another: the size written
where it is built changes, to the program's own name for the input's size where it has one;
a layer whose size is in the input, in another dimension, is a layout question and is left
alone; an attention layer given batch-first input is built batch first. Each change is
tried."""

from __future__ import annotations

from typing import Any

from .runs import diagnoses_for, first_for_error

HEAD = """import torch
import torch.nn as nn
torch.manual_seed(0)
"""

NAMED = HEAD + """class Tagger(nn.Module):
    def __init__(self, vocab, hidden, width):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.norm = nn.LayerNorm(width)
        self.out = nn.Linear(hidden, 3)

    def forward(self, ids):
        return self.out(self.norm(self.embed(ids)))


model = Tagger(vocab=50, hidden=24, width=32)
print(model(torch.randint(0, 50, (4, 7))).shape)
"""


def test_a_layernorm_sized_by_the_wrong_argument_gets_the_inputs_name(sandbox: Any) -> None:
    first = diagnoses_for(sandbox, NAMED)[0]
    assert (first.id, first.root_line, first.fix_verified) == (
        "layer-built-for-other-size", 8, True)
    assert first.patch is not None and "+        self.norm = nn.LayerNorm(hidden)" in first.patch
    assert "32" in first.title.en and "24" in first.title.en
    assert any("`embed`" in step.en for step in first.chain)


LAYOUT = HEAD + """class Block(nn.Module):
    def __init__(self, channels=8):
        super().__init__()
        self.conv = nn.Conv1d(4, channels, 3, padding=1)
        self.norm = nn.LayerNorm(channels)

    def forward(self, x):
        return self.norm(self.conv(x))


print(Block()(torch.randn(2, 4, 12)).shape)
"""


def test_a_layernorm_whose_size_is_the_inputs_channels_is_a_layout_not_a_size(
        sandbox: Any) -> None:
    # (2, 8, 12): the 8 channels the layer was built for are there, in dimension 1;
    # LayerNorm(12) would run and normalise over time: the channels go last for it instead
    found = diagnoses_for(sandbox, LAYOUT)
    assert "layer-built-for-other-size" not in [d.id for d in found]
    first = found[0]
    assert (first.id, first.root_line, first.fix_verified) == ("layernorm-channels-first", 11,
                                                                True)
    assert first.patch is not None and \
        "self.norm(self.conv(x).movedim(1, -1)).movedim(-1, 1)" in first.patch


ATTENTION = HEAD + """class Pool(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.attn = nn.MultiheadAttention(dim, 2)

    def forward(self, x, pad):
        out, _ = self.attn(x, x, x, key_padding_mask=pad)
        return out.mean(1)


x = torch.randn(3, 10, 16)
pad = torch.zeros(3, 10, dtype=torch.bool)
print(Pool()(x, pad).shape)
"""


def test_an_attention_layer_given_batch_first_input_is_built_batch_first(
        sandbox: Any) -> None:
    first = diagnoses_for(sandbox, ATTENTION)[0]
    assert (first.id, first.root_line, first.fix_verified) == ("attention-batch-first", 7, True)
    assert first.patch is not None and \
        "nn.MultiheadAttention(dim, 2, batch_first=True)" in first.patch
    assert "(3, 10, 16)" in first.explanation.en


HIDDEN = HEAD + """class Decoder(nn.Module):
    def __init__(self, size, two_layers=False):
        super().__init__()
        self.size = size * 2 if two_layers else 1
        self.gru = nn.GRU(4, self.size, batch_first=True)

    def forward(self, x, state):
        return self.gru(x, state)[0]


encoder = nn.GRU(4, 32, batch_first=True)
x = torch.randn(5, 6, 4)
_, state = encoder(x)
print(Decoder(32)(x, state).shape)
"""


def test_a_hidden_state_of_another_size_shows_how_the_layers_size_was_computed(
        sandbox: Any) -> None:
    first = diagnoses_for(sandbox, HIDDEN)[0]
    assert (first.id, first.root_line) == ("rnn-hidden-size", 8)
    assert any("line 7" in step.en and "`size * 2 if two_layers else 1`" in step.en
               for step in first.chain)
    # every call passes `size` the state's 32: the program's own name for it
    assert first.fix_verified and first.patch is not None and \
        "+        self.gru = nn.GRU(4, size, batch_first=True)" in first.patch


# A decoder cell built for the embedding and its own hidden size, given the embedding joined
# with the encoder's context: the sum's second term was meant to be the encoder's size,
# another name of the program (a default no call overrides), and that is tried first.
CELL = """import torch
import torch.nn as nn


class Step(nn.Module):
    def __init__(self, emb=10, enc_size=24, dec_size=12):
        super().__init__()
        self.cell = nn.LSTMCell(emb + dec_size, dec_size)
        self.context = torch.zeros(3, enc_size)

    def forward(self, word, state):
        return self.cell(torch.cat([word, self.context], dim=1), state)


step = Step()
h = (torch.zeros(3, 12), torch.zeros(3, 12))
print(step(torch.randn(3, 10), h)[0].shape)
"""


def test_a_cell_built_from_a_sum_of_sizes_gets_the_term_that_was_meant(sandbox: Any) -> None:
    first = first_for_error(sandbox, CELL)
    assert (first.id, first.root_line, first.fix_verified) == ("layer-built-for-other-size",
                                                               8, True)
    assert first.patch is not None and "nn.LSTMCell(emb + enc_size, dec_size)" in first.patch

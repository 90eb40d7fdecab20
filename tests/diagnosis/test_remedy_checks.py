"""The remedy torch's message names, made where the run shows it is needed and tried: a
keyword it says to pass, a clone() where a write shares memory with what it reads or with
itself. Programs of our own."""

from __future__ import annotations

from typing import Any

from tutor.diagnosis.remedy_checks import PASS_KEYWORD

from .runs import first_for_error

UNSORTED = """import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence
def encode(rnn, x, lengths):
    packed = pack_padded_sequence(x, lengths, batch_first=True)
    return rnn(packed)[1]
rnn = nn.GRU(2, 3, batch_first=True)
print(encode(rnn, torch.randn(3, 5, 2), torch.tensor([2, 5, 4])).shape)
"""

SELF_INDEXED = """import torch
keep = torch.tensor([True, True, False, True])
scores = torch.tensor([0.9, 0.1, 0.5, 0.7])
keep[keep] = scores[keep] > 0.5
print(keep)
"""

EXPANDED_STATE = """import torch
class Tracker:
    def __init__(self):
        self.state = torch.zeros(1, 3).expand(4, 3)
    def update(self, x):
        self.state.mul_(0.9).add_(x)
t = Tracker()
t.update(torch.ones(4, 3))
print(t.state)
"""



def test_a_keyword_the_message_names_is_passed_where_the_call_is(sandbox: Any) -> None:
    first = first_for_error(sandbox, UNSORTED)
    assert (first.id, first.root_line, first.fix_verified) == ("message-remedy", 5, True)
    assert "pass `enforce_sorted=False` to `pack_padded_sequence`" in first.fix.en


def test_a_keyword_that_only_hides_a_mismatch_is_not_read_as_a_remedy() -> None:
    found = PASS_KEYWORD.search("You can pass `strict=False` to load_state_dict to ignore it")
    assert found is not None and found["kw"] == "strict"  # and the check refuses it by name


def test_a_write_that_reads_itself_reads_a_copy(sandbox: Any) -> None:
    first = first_for_error(sandbox, SELF_INDEXED)
    assert (first.id, first.root_line, first.fix_verified) == ("message-remedy", 4, True)
    assert "`keep.clone()`" in first.fix.en
    assert "keep[keep.clone()]" in (first.patch or "")


def test_a_write_into_an_expanded_tensor_clones_it_where_it_is_made(sandbox: Any) -> None:
    first = first_for_error(sandbox, EXPANDED_STATE)
    assert (first.id, first.root_line, first.fix_verified) == ("message-remedy", 4, True)
    assert ".expand(4, 3).clone()" in (first.patch or "")
    assert any("line 6 writes into `state`" in step.en for step in first.chain)

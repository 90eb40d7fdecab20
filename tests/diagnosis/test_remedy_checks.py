"""The remedy torch's message names, made where the run shows it is needed and tried: a
keyword it says to pass, a clone() where a write shares memory with what it reads or with
itself. Programs of our own."""

from __future__ import annotations

from typing import Any

from tutor.diagnosis.candidate import Ctx
from tutor.diagnosis.flow import Flow
from tutor.diagnosis.remedy_checks import check_keyword_the_message_names
from tutor.sandbox.models import ErrorInfo, Evidence, RunResult

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


def _failing(code: str, message: str) -> Ctx:
    flow = Flow.of(code)
    assert flow is not None
    error = ErrorInfo(type="RuntimeError", message=message, line=2)
    return Ctx(code=code, flow=flow, result=RunResult(outcome="error", device="cpu",
                                                      error=error),
               evidence=Evidence(), error=error)


def test_a_keyword_that_only_hides_a_mismatch_is_not_read_as_a_remedy() -> None:
    """The message's words are read alike for both keywords; strict=False is refused by
    name (it loads what matches and says nothing of the rest)."""
    code = "import torch.nn as nn\nnet.load_state_dict(saved)\n"
    said = "Missing key(s). You can pass `{}` to load_state_dict to sidestep this."
    hiding = check_keyword_the_message_names(_failing(code, said.format("strict=False")))
    other = check_keyword_the_message_names(_failing(code, said.format("assign=True")))
    assert hiding == []
    assert [c.id for c in other] == ["message-remedy"]
    assert "assign=True" in other[0].fixes[0].describe.en


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


def test_views_of_a_split_changed_in_place_are_all_made_out_of_place(sandbox: Any) -> None:
    # chunk() returns several views: changing one in place raises, and the fix the message
    # names ("an out-of-place one") is needed on the other view unpacked beside it too
    code = """import torch
import torch.nn as nn

class Gate(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 8)
        self.shift = nn.Parameter(torch.zeros(4))

    def forward(self, x):
        a, b = self.proj(x).chunk(2, dim=1)
        a *= 2.0
        b += self.shift
        return torch.sigmoid(a) * torch.tanh(b)

Gate()(torch.randn(3, 4)).sum().backward()
"""
    first = first_for_error(sandbox, code)
    assert (first.id, first.root_line, first.fix_verified) == ("message-remedy", 12, True)
    assert first.patch is not None and "a = a * 2.0" in first.patch
    assert "b = b + self.shift" in first.patch

"""A silent program that hides an error (``strict=False``, an ``except`` that passes): run
without the silencer, the error it hid is diagnosed, and that diagnosis's tried fix, with the
silencer taken away, is given when the learner's program so changed prints something else.
Programs of our own."""

from __future__ import annotations

from typing import Any

from tutor.diagnosis.fixes import diff, patched
from tutor.diagnosis.flow import Flow
from tutor.diagnosis.reasoning import diagnose
from tutor.diagnosis.silencers import silencers

PREFIXED_NON_STRICT = """import torch
import torch.nn as nn
class Wrapper(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = nn.Linear(2, 1)
trained = Wrapper()
with torch.no_grad():
    trained.inner.weight.fill_(3.0)
fresh = nn.Linear(2, 1)
fresh.load_state_dict(trained.state_dict(), strict=False)
print("weight after loading:", fresh.weight.tolist())
"""

SWALLOWED = """import torch
w = torch.ones(3, requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1)
for step in range(3):
    opt.zero_grad()
    out = w * 2
    try:
        out.backward()
    except RuntimeError:
        pass
    opt.step()
print("w:", w.tolist())
"""

MATCHING_NON_STRICT = """import torch.nn as nn
a, b = nn.Linear(2, 1), nn.Linear(2, 1)
b.load_state_dict(a.state_dict(), strict=False)
print("same:", bool((a.weight == b.weight).all()))
"""


def test_the_silencers_of_a_program_are_found_and_taken_away() -> None:
    found = silencers(SWALLOWED, Flow.of(SWALLOWED))
    assert [s.line for s in found] == [9]
    assert "        raise" in found[0].code.splitlines()
    found = silencers(PREFIXED_NON_STRICT, Flow.of(PREFIXED_NON_STRICT))
    assert [s.line for s in found] == [11] and "strict=True" in found[0].code


def test_a_diff_is_applied_back() -> None:
    after = SWALLOWED.replace("out.backward()", "out.sum().backward()").replace("pass", "raise")
    assert patched(SWALLOWED, diff(SWALLOWED, after)) == after
    assert patched(SWALLOWED.replace("opt", "optim"), diff(SWALLOWED, after)) is None


def test_strict_false_hid_keys_that_differ_by_a_prefix(sandbox: Any) -> None:
    result = sandbox.run(PREFIXED_NON_STRICT)
    assert result.outcome == "ok"
    first = diagnose(PREFIXED_NON_STRICT, result, sandbox)[0]
    assert (first.id, first.root_line, first.fix_verified) == ("state-dict-prefix", 11, True)
    assert "`strict=False` on line 11 kept an error from showing" in first.chain[0].en
    assert "k.removeprefix('inner.')" in first.fix.en and "`strict=True`" in first.fix.en
    assert "strict=True" in (first.patch or "") and "removeprefix" in (first.patch or "")


def test_an_except_that_passes_hid_a_backward_that_never_ran(sandbox: Any) -> None:
    result = sandbox.run(SWALLOWED)
    assert result.outcome == "ok" and "w: [1.0, 1.0, 1.0]" in result.stdout
    first = diagnose(SWALLOWED, result, sandbox)[0]
    assert first.id == "non-scalar-backward" and first.fix_verified
    assert "the `except` that does `pass`" in first.chain[0].en
    assert "grad can be implicitly created only for scalar outputs" in first.chain[0].en
    assert "+        raise" in (first.patch or "")


def test_a_non_strict_load_that_loads_everything_hides_nothing(sandbox: Any) -> None:
    result = sandbox.run(MATCHING_NON_STRICT)
    assert "same: True" in result.stdout
    assert diagnose(MATCHING_NON_STRICT, result, sandbox) == []

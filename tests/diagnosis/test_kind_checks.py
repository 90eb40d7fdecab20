"""A call whose message says what kind of value it wants, given another kind: the argument is
converted to that kind (where it was made, when a conversion there gave it its kind), and
only a change the re-run shows working is given. Programs of our own, one per kind."""

from __future__ import annotations

from typing import Any

import pytest

from tutor.diagnosis.kind_checks import wanted_kind
from tutor.diagnosis.reasoning import diagnose

from .runs import diagnoses_for, first_for_error

FLOAT_MASK = """import torch
def pad_mask(lengths, width):
    return (torch.arange(width)[None, :] >= lengths[:, None]).float()
scores = torch.randn(3, 5, requires_grad=True)
mask = pad_mask(torch.tensor([5, 3, 2]), 5)
weights = scores.masked_fill(mask, float("-inf")).softmax(-1)
weights[:, 0].sum().backward()
print(scores.grad)
"""

FLOAT_INDEX = """import torch
logits = torch.randn(4, 3, requires_grad=True)
labels = torch.tensor([0., 2., 1., 2.])
one_hot = torch.zeros(4, 3).scatter(1, labels.unsqueeze(1), 1.0)
loss = -(one_hot * logits.log_softmax(1)).sum()
loss.backward()
print(logits.grad)
"""

INT_TARGET = """import torch
import torch.nn as nn
net = nn.Linear(3, 1)
x = torch.randn(8, 3)
y = torch.randint(0, 2, (8, 1))
loss = nn.BCEWithLogitsLoss()(net(x), y)
loss.backward()
print(net.weight.grad)
"""

HALVED = """import torch.nn as nn
class Head(nn.Module):
    def __init__(self, width=30):
        super().__init__()
        self.a = nn.Linear(width, width / 2)
        self.b = nn.Linear(width / 2, 1)
    def forward(self, x):
        return self.b(self.a(x))
print(Head())
"""

MODEL_GIVEN = """import torch
import torch.nn as nn
def make_optimizer(net, fast):
    if fast:
        return torch.optim.Adam(net, lr=1e-3)
    return torch.optim.SGD(net, lr=0.1)
net = nn.Linear(2, 1)
opt = make_optimizer(net, True)
net(torch.ones(1, 2)).sum().backward()
opt.step()
print(net.bias)
"""

OLD_INDEX = """import torch
w = torch.zeros(2, requires_grad=True)
total = 0.0
for step in range(3):
    loss = ((w - 1) ** 2).sum()
    loss.backward()
    total += loss.data[0]
print(total)
"""



@pytest.mark.parametrize(("message", "kind"), [
    ("masked_fill_ only supports boolean masks, but got mask with dtype float", "bool"),
    ("scatter(): Expected dtype int32/int64 for index", "long"),
    ("Found dtype Long but expected Float", "float"),
    ("empty(): argument 'size' (position 1) must be tuple of ints, but found element of type "
     "float at pos 0", "int"),
    ("'Net' object is not iterable", "parameters"),
    ("invalid index of a 0-dim tensor. Use `tensor.item()` in Python", "item"),
    # two operands that disagree are the operands' check's question, not a wanted kind
    ("expected scalar type Float but found Double", None),
    ("mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)", None),
])
def test_the_message_says_which_kind_is_wanted(message: str, kind: str | None) -> None:
    assert wanted_kind(message) == kind


def test_a_float_mask_is_traced_to_the_conversion_that_made_it(sandbox: Any) -> None:
    first = first_for_error(sandbox, FLOAT_MASK)
    assert (first.id, first.root_line, first.fix_verified) == ("wanted-kind", 3, True)
    assert "`torch.arange(width)[None, :] >= lengths[:, None]`" in first.fix.en
    assert "without `.float()`" in first.fix.en
    assert "`torch.float32`" in first.title.en and "布尔张量" in first.title.zh
    assert any("line 3" in step.en and ".float(...)" in step.en for step in first.chain)


def test_a_float_index_becomes_long_where_it_is_given(sandbox: Any) -> None:
    first = first_for_error(sandbox, FLOAT_INDEX)
    assert (first.id, first.root_line, first.fix_verified) == ("wanted-kind", 4, True)
    assert "`labels.unsqueeze(1).long()`" in first.fix.en


def test_integer_targets_of_a_float_loss_become_float(sandbox: Any) -> None:
    first = first_for_error(sandbox, INT_TARGET)
    assert (first.id, first.fix_verified) == ("wanted-kind", True)
    assert "`y.float()`" in first.fix.en and "`torch.int64`" in first.title.en


def test_sizes_from_true_division_are_floor_divided_on_every_line_alike(sandbox: Any) -> None:
    first = first_for_error(sandbox, HALVED)
    assert (first.id, first.root_line, first.fix_verified) == ("wanted-kind", 5, True)
    assert "on lines 5, 6" in first.fix.en and "`width // 2`" in first.fix.en


def test_a_model_given_to_an_optimizer_gives_its_parameters_in_both_branches(
    sandbox: Any,
) -> None:
    first = first_for_error(sandbox, MODEL_GIVEN)
    assert (first.id, first.root_line, first.fix_verified) == ("wanted-kind", 5, True)
    assert "on lines 5, 6" in first.fix.en and "`net.parameters()`" in first.fix.en
    assert "`Linear`" in first.title.en


def test_an_old_loss_index_becomes_item(sandbox: Any) -> None:
    first = first_for_error(sandbox, OLD_INDEX)
    assert (first.id, first.root_line, first.fix_verified) == ("wanted-kind", 7, True)
    assert "`loss.item()`" in first.fix.en


def test_a_conversion_that_does_not_make_the_program_run_is_not_given(sandbox: Any) -> None:
    """The mask is boolean but has the wrong shape: converting kinds cannot help."""
    code = FLOAT_MASK.replace(".float()", "").replace("scores.masked_fill(mask",
                                                       "scores.masked_fill(mask.float()[:2]")
    result = sandbox.run(code)
    assert result.outcome == "error"
    found = diagnose(code, result, sandbox)
    assert all(not (d.id == "wanted-kind" and d.fix_verified) for d in found)


def test_an_alternative_cause_is_named_once(sandbox: Any) -> None:
    """Float class labels: the loss's own diagnosis is first; the kind check's two readings
    of the same line (at the call, where the labels are made) are one alternative."""
    code = """import torch
import torch.nn as nn
def step(model, x, labels):
    return nn.CrossEntropyLoss()(model(x), labels)
labels = torch.tensor([0.0, 2.0, 1.0]).float()
print(step(nn.Linear(4, 3), torch.randn(3, 4), labels))
"""
    first = first_for_error(sandbox, code)
    assert first.id == "ce-target-dtype"
    assert len(first.alternatives) == len(set(first.alternatives))


GRU_KEPT_WHOLE = """import torch
import torch.nn as nn
class Reader(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(3, 5, batch_first=True)
        self.out = nn.Linear(5, 1)
    def forward(self, x):
        states = self.gru(x)
        return self.out(states[:, -1])
print(Reader()(torch.randn(2, 4, 3)).shape)
"""

LOSS_PAIR = """import torch
def loss_with_parts(pred, target):
    mse = ((pred - target) ** 2).mean()
    return mse, {"mse": mse.item()}
w = torch.ones(3, requires_grad=True)
loss = loss_with_parts(w * 2, torch.zeros(3))
loss.backward()
print(w.grad)
"""


@pytest.mark.parametrize(("code", "line", "name"), [(GRU_KEPT_WHOLE, 9, "states"),
                                                    (LOSS_PAIR, 6, "loss")])
def test_a_tuple_used_as_a_tensor_is_unpacked_where_it_is_made(
    sandbox: Any, code: str, line: int, name: str,
) -> None:
    first = first_for_error(sandbox, code)
    assert (first.id, first.root_line, first.fix_verified) == ("tuple-used-as-tensor", line,
                                                                True)
    assert f"`{name}, *_ = ...`" in first.fix.en and f"`{name}` is a tuple" in first.title.en


WRAPPED_SAVE = """import torch.nn as nn
net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
saved = nn.DataParallel(net).state_dict()
fresh = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
fresh.load_state_dict(saved)
print("loaded")
"""

PART_SAVED = """import torch.nn as nn
class Outer(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(3, 2)
part = nn.Linear(3, 2)
whole = Outer()
whole.load_state_dict(part.state_dict())
print("loaded")
"""


BARE_INTO_WRAPPER = """import torch.nn as nn
net = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 1))
saved = net.state_dict()
model = nn.DataParallel(nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 1)))
model.load_state_dict(saved)
print("loaded")
"""


@pytest.mark.parametrize(("code", "line", "cid", "change"), [
    (WRAPPED_SAVE, 5, "state-dict-prefix", "k.removeprefix('module.')"),
    (PART_SAVED, 8, "state-dict-prefix-missing", "'body.' + k"),
    # the wrapper's keys lack one the saved BatchNorm has (num_batches_tracked is made when
    # absent, so the model does not miss it): still the prefix, loaded into the wrapped model
    (BARE_INTO_WRAPPER, 5, "state-dict-prefix-missing", "`model.module.load_state_dict(saved)`"),
])
def test_checkpoint_keys_that_differ_by_a_prefix_are_renamed_where_loaded(
    sandbox: Any, code: str, line: int, cid: str, change: str,
) -> None:
    first = first_for_error(sandbox, code)
    assert (first.id, first.root_line, first.fix_verified) == (cid, line, True)
    assert change in first.fix.en and "strict=False" not in first.fix.en


SCALE_RENORMALISED = """import torch
import torch.nn as nn
class Mixer(nn.Module):
    def __init__(self):
        super().__init__()
        self.mix = nn.Parameter(torch.ones(3))
    def forward(self, parts):
        self.mix = self.mix / self.mix.sum()
        return sum(m * p for m, p in zip(self.mix, parts))
mixer = Mixer()
print(mixer([torch.ones(2), torch.zeros(2), torch.ones(2)]))
"""

PLAIN_REGISTERED = """import torch
class Gate(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_parameter("gate", torch.zeros(4))
    def forward(self, x):
        return x * self.gate.sigmoid()
print(Gate()(torch.ones(4)))
"""


def test_a_value_computed_from_a_parameter_goes_into_a_local_name(sandbox: Any) -> None:
    first = first_for_error(sandbox, SCALE_RENORMALISED)
    assert (first.id, first.root_line, first.fix_verified) == ("parameter-assigned", 8, True)
    assert "`mix = ...`" in first.fix.en
    assert "+        mix = self.mix / self.mix.sum()" in (first.patch or "")
    assert "zip(mix, parts)" in (first.patch or "")


def test_a_plain_tensor_registered_as_a_parameter_is_wrapped(sandbox: Any) -> None:
    first = first_for_error(sandbox, PLAIN_REGISTERED)
    assert (first.id, first.root_line, first.fix_verified) == ("parameter-assigned", 5, True)
    assert "`torch.nn.Parameter(torch.zeros(4))`" in first.fix.en


def test_a_division_at_another_place_of_the_same_function_is_left_as_it_is(sandbox: Any) -> None:
    """The size is floor-divided; the fill value of another torch.full, divided on purpose,
    stays a float."""
    code = """import torch
n = 6
half = torch.full((n / 2,), 1.0)
scale = torch.full((3,), n / 4)
print(half.sum() * scale)
"""
    first = first_for_error(sandbox, code)
    assert (first.id, first.fix_verified) == ("wanted-kind", True)
    assert "n // 2" in (first.patch or "") and "n // 4" not in (first.patch or "")


# parent beams taken from flat top-k indices with true division (corpus14
# beam-search-back-pointers-true-division-zh, after its scoring): the index turns float where
# it is divided, two lines before the op that fails
BEAMS = """import torch
torch.manual_seed(0)

def parents(scores, width):
    top = scores.topk(3, dim=1).indices
    return {divide}

beams = torch.arange(6).view(2, 3)
print(beams.gather(1, parents(torch.randn(2, 12), 4)))
"""


@pytest.mark.parametrize(("divide", "fix"), [
    ("top / 4 if width == 4 else top", "`top // 4`"),
    ("torch.div(top, width)", '`torch.div(top, width, rounding_mode="floor")`'),
], ids=["operator", "call"])
def test_an_index_made_float_by_a_division_is_found_where_it_is_divided(
        sandbox: Any, divide: str, fix: str) -> None:
    first = first_for_error(sandbox, BEAMS.format(divide=divide))
    assert (first.id, first.root_line, first.fix_verified) == ("wanted-kind", 6, True)
    assert fix in first.fix.en
    assert any("line 6" in step.en and "`torch.float32`" in step.en for step in first.chain)
    assert any("第 6 行" in step.zh for step in first.chain)


SLICED_KEYS = """import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(3, 2))
saved = {k[8:]: v for k, v in Net().state_dict().items()}
Net().load_state_dict(saved)
"""


def test_keys_that_differ_by_part_of_a_name_are_not_a_prefix(sandbox: Any) -> None:
    # `backbone.0.weight` against `e.0.weight`: a slice cut the names, `backbon` is no prefix
    found = [d.id for d in diagnoses_for(sandbox, SLICED_KEYS)]
    assert "state-dict-prefix" not in found and "state-dict-prefix-missing" not in found

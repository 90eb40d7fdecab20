"""Common messages whose cause is on another line than the one that failed
(tutor/diagnosis/message_checks.py, and a parameter replaced through ``setattr`` in
kind_checks): each program gets the message's own diagnosis at its root line, with a change
whose re-run worked, in both languages; the program written right gets no such diagnosis.
The first program of each is a learner's minimal repro; the others are our own."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tutor.diagnosis.reasoning import diagnose

from .runs import first_for_error, not_diagnosed, verified_diagnosis

CJK = re.compile(r"[\u4e00-\u9fff]")

BUFFER_ASSIGNED = """import torch
import torch.nn as nn

class Memory(nn.Module):
    def __init__(self, n=8, m=4):
        super().__init__()
        self.mem_bias = torch.zeros(n, m)
        self.register_buffer("mem_bias", self.mem_bias)

print(Memory().mem_bias.shape)
"""

PARAMETER_ASSIGNED = """import torch
import torch.nn as nn


class Scaler(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.scale = torch.ones(width) * 0.5
        self.register_parameter("scale", nn.Parameter(self.scale))

    def forward(self, x):
        return x * self.scale


print(Scaler(3)(torch.randn(2, 3)).sum())
"""

EXPAND = """import torch

bias = torch.randn(4)
x = torch.randn(2, 3)
print(x + bias.expand(2, 3))
"""

EXPAND_AS = """import torch


def masked_scores(scores, lengths):
    mask = torch.arange(scores.size(1))[None, :] < lengths[:, None]
    mask = mask[:, :4]
    return scores.masked_fill(~mask.expand_as(scores), 0.0)


print(masked_scores(torch.randn(3, 6), torch.tensor([2, 5, 6])))
"""

INPLACE_SMALL = """import torch

total = torch.zeros(1)
batch = torch.randn(3, 4)
for row in batch:
    total += row
print(total)
"""

INPLACE_SMALL_METHOD = """import torch


def total(rows):
    s = torch.zeros(1, 3)
    for r in rows:
        s.add_(r)
    return s


print(total(torch.randn(5, 2, 3)))
"""

INPLACE_INTEGERS = """import torch

counts = torch.tensor([3, 5, 8])
counts /= counts.sum()
print(counts)
"""

INPLACE_INTEGERS_IN_FUNCTION = """import torch


def histogram(values, bins=5):
    hist = torch.zeros(bins, dtype=torch.long)
    for v in values:
        hist[int(v * bins) % bins] += 1
    hist *= 1.0 / len(values)
    return hist


print(histogram(torch.rand(20)))
"""

LSTM_STATE = """import torch
import torch.nn as nn

lstm = nn.LSTM(10, 20, batch_first=True)
h0 = torch.zeros(1, 4, 20)
c0 = torch.zeros(1, 4, 20)
x = torch.randn(8, 5, 10)
out, _ = lstm(x, (h0, c0))
"""

GRU_STATE = """import torch
import torch.nn as nn


def encode(gru, x):
    h = torch.zeros(2, 16, 32)
    out, h = gru(x, h)
    return out[:, -1]


gru = nn.GRU(10, 32, num_layers=2)
seq = torch.randn(7, 4, 10)
print(encode(gru, seq).shape)
"""

MODULE_LIST_CALLED = """import torch
import torch.nn as nn

class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(8, 8) for _ in range(3)])

    def forward(self, x):
        return self.layers(x)

print(MLP()(torch.randn(2, 8)))
"""

MODULE_DICT_CALLED = """import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleDict({"a": nn.Linear(4, 4), "b": nn.Linear(4, 4)})

    def forward(self, inp):
        h = self.blocks(inp)
        return h.relu() + inp


print(Net()(torch.randn(2, 4)).shape)
"""

ONE_CYCLE = """import torch
import torch.nn as nn

model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
data = torch.randn(100, 4)
batch_size = 32
sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, epochs=2,
                                            steps_per_epoch=len(data) // batch_size)
for epoch in range(2):
    for i in range(0, len(data), batch_size):
        loss = model(data[i:i + batch_size]).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
"""

ONE_CYCLE_LOADER = """import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

model = nn.Linear(4, 1)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
loader = DataLoader(TensorDataset(torch.randn(50, 4), torch.randn(50, 1)), batch_size=8)
scheduler = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=1e-2, epochs=3, steps_per_epoch=6)


def train_epoch():
    for xb, yb in loader:
        loss = ((model(xb) - yb) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        scheduler.step()


for epoch in range(3):
    train_epoch()
"""

ONE_HOT_FLOAT = """import torch
import torch.nn.functional as F

labels = torch.tensor([0., 2., 1.])
print(F.one_hot(labels, num_classes=3))
"""

ONE_HOT_COMPUTED = """import torch
import torch.nn.functional as F


def targets(x):
    return (x > 0).float().sum(1)


x = torch.randn(6, 3)
y = targets(x)
encoded = F.one_hot(y, num_classes=4)
print(encoded.sum(0))
"""

SETATTR_UPDATE = """import torch
import torch.nn as nn

model = nn.Linear(4, 2)
x, y = torch.randn(8, 4), torch.randn(8, 2)
loss = ((model(x) - y) ** 2).mean()
grads = torch.autograd.grad(loss, model.parameters(), create_graph=True)
for (name, p), g in zip(list(model.named_parameters()), grads):
    setattr(model, name, p - 0.1 * g)
print(model(x).sum())
"""

WEIGHT_DROP = """import torch
import torch.nn as nn
import torch.nn.functional as F


class WeightDrop(nn.Module):
    def __init__(self, module, name="weight", p=0.5):
        super().__init__()
        self.module, self.name, self.p = module, name, p
        w = getattr(module, name)
        self.register_parameter(name + "_raw", nn.Parameter(w.data))

    def forward(self, x):
        raw = getattr(self, self.name + "_raw")
        w = F.dropout(raw, p=self.p, training=self.training)
        setattr(self.module, self.name, w)
        return self.module(x)


layer = WeightDrop(nn.Linear(4, 3))
print(layer(torch.randn(2, 4)).shape)
"""


def _both_languages(first: Any) -> None:
    for words in (first.title, first.explanation, first.fix, *first.chain):
        assert CJK.search(words.zh) and not CJK.search(words.en), words
        assert "{" not in words.en + words.zh, words


# (program, diagnosis, root line, what the tried change writes, the program written right)
FIXED = [
    (BUFFER_ASSIGNED, "assigned-before-registered", 7,
     'self.register_buffer("mem_bias", torch.zeros(n, m))',
     BUFFER_ASSIGNED.replace("        self.mem_bias = torch.zeros(n, m)\n", "").replace(
         "self.mem_bias)", "torch.zeros(n, m))")),
    (PARAMETER_ASSIGNED, "assigned-before-registered", 8,
     'nn.Parameter(torch.ones(width) * 0.5)',
     PARAMETER_ASSIGNED.replace("self.scale = torch.ones", "scale = torch.ones").replace(
         "nn.Parameter(self.scale)", "nn.Parameter(scale)")),
    (INPLACE_SMALL, "inplace-target-too-small", 3, "total = torch.zeros(4)",
     INPLACE_SMALL.replace("torch.zeros(1)", "torch.zeros(4)")),
    (INPLACE_SMALL_METHOD, "inplace-target-too-small", 5, "torch.zeros(2, 3)",
     INPLACE_SMALL_METHOD.replace("torch.zeros(1, 3)", "torch.zeros(2, 3)")),
    (INPLACE_INTEGERS, "inplace-into-integers", 3,
     "torch.tensor([3, 5, 8], dtype=torch.float32)",
     INPLACE_INTEGERS.replace("[3, 5, 8]", "[3., 5., 8.]")),
    (INPLACE_INTEGERS_IN_FUNCTION, "inplace-into-integers", 5,
     "torch.zeros(bins, dtype=torch.float32)",
     INPLACE_INTEGERS_IN_FUNCTION.replace("hist *= 1.0", "hist = hist * 1.0")),
    (LSTM_STATE, "rnn-state-batch", 5, "h0 = torch.zeros(1, x.size(0), 20)",
     LSTM_STATE.replace("1, 4, 20", "1, 8, 20")),
    (GRU_STATE, "rnn-state-batch", 6, "torch.zeros(2, x.size(1), 32)",
     GRU_STATE.replace("2, 16, 32", "2, x.size(1), 32")),
    (MODULE_LIST_CALLED, "container-called", 10, "for layer in self.layers:",
     MODULE_LIST_CALLED.replace("nn.ModuleList([", "nn.Sequential(*[")),
    (MODULE_DICT_CALLED, "container-called", 11, "for layer in self.blocks.values():",
     MODULE_DICT_CALLED.replace("h = self.blocks(inp)",
                                "h = self.blocks['b'](self.blocks['a'](inp))")),
    (ONE_CYCLE, "schedule-too-short", 8, "math.ceil(len(data) / batch_size)",
     ONE_CYCLE.replace("len(data) // batch_size", "-(-len(data) // batch_size)")),
    (ONE_CYCLE_LOADER, "schedule-too-short", 8, "steps_per_epoch=len(loader)",
     ONE_CYCLE_LOADER.replace("steps_per_epoch=6", "steps_per_epoch=len(loader)")),
    (ONE_HOT_FLOAT, "one-hot-float-labels", 4, "dtype=torch.long",
     ONE_HOT_FLOAT.replace("[0., 2., 1.]", "[0, 2, 1]")),
    (ONE_HOT_COMPUTED, "one-hot-float-labels", 6, ".long()",
     ONE_HOT_COMPUTED.replace(".float().sum(1)", ".long().sum(1)")),
    (SETATTR_UPDATE, "parameter-assigned", 9, "delattr(model, name)",
     SETATTR_UPDATE.replace(
         "for (name, p), g in zip(list(model.named_parameters()), grads):\n"
         "    setattr(model, name, p - 0.1 * g)\nprint(model(x).sum())",
         "new = {n: p - 0.1 * g for (n, p), g in zip(model.named_parameters(), grads)}\n"
         "print(torch.func.functional_call(model, new, (x,)).sum())")),
    (WEIGHT_DROP, "parameter-assigned", 16, "delattr(self.module, self.name)",
     WEIGHT_DROP.replace("        w = getattr(module, name)\n",
                         "        w = getattr(module, name)\n"
                         "        del module._parameters[name]\n")),
]


@pytest.mark.parametrize(("code", "cid", "root", "fix_has", "right"), FIXED,
                         ids=[f"{c[1]}-{c[2]}" for c in FIXED])
def test_the_cause_is_named_with_a_change_that_worked(
    sandbox: Any, code: str, cid: str, root: int, fix_has: str, right: str,
) -> None:
    first = verified_diagnosis(sandbox, code, {cid}, root, fix_has)
    _both_languages(first)
    assert first.fix_check is not None and first.fix_check.zh
    not_diagnosed(sandbox, cid, right)


@pytest.mark.parametrize(("code", "name", "origin"), [(EXPAND, "bias", "line 3"),
                                                      (EXPAND_AS, "mask", "line 6")],
                         ids=["expand", "expand_as"])
def test_an_expand_names_the_tensor_its_sizes_and_where_its_size_came_from(
    sandbox: Any, code: str, name: str, origin: str,
) -> None:
    """Which of the two sizes is meant is the learner's to say: no change is proposed."""
    first = first_for_error(sandbox, code)
    assert (first.id, first.patch) == ("expand-size-mismatch", None)
    assert f"`{name}` has 4" in first.title.en and "asks for" in first.title.en
    assert any(origin in step.en for step in first.chain), first.chain
    _both_languages(first)
    not_diagnosed(sandbox, "expand-size-mismatch", code.replace(".expand(2, 3)", "[:3]")
                  .replace("    mask = mask[:, :4]\n", ""))


def test_the_setattr_words_say_a_registered_parameter_takes_only_a_parameter(
    sandbox: Any,
) -> None:
    first = first_for_error(sandbox, SETATTR_UPDATE)
    assert any("calls `setattr`" in s.en and "`nn.Parameter`" in s.en for s in first.chain)
    assert any("`setattr`" in s.zh for s in first.chain)


def test_a_misspelled_forward_is_still_named_as_such(sandbox: Any) -> None:
    """Another module without ``forward`` (a ``ModuleList`` called is this module's)."""
    code = MODULE_LIST_CALLED.replace(
        "    def forward(self, x):\n        return self.layers(x)",
        "    def foward(self, x):\n        return self.layers[0](x)")
    result = sandbox.run(code)
    found = diagnose(code, result, sandbox)
    assert found[0].id == "forward-not-found" and "container-called" not in {
        d.id for d in found}

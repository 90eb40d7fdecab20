"""The error messages learners ask about most often in public threads
(benchmarks/frequent_messages.md) that got only the generic diagnosis before: each repro, and
a variant of its own (inside a function or a class, other names), gets its specific diagnosis
at the right line in both languages, with the fix tried where one fits; the program written
right gets no such diagnosis."""

from __future__ import annotations

import re
from typing import Any

import pytest

from .runs import first_for_error, not_diagnosed, verified_diagnosis

HAN = re.compile(r"[\u4e00-\u9fff]")

# (id, root line, what the tried fix's patch has, the program, the program written right)
FIXED = [
    ("deepcopy-non-leaf", 5, "v.detach().clone()", """import copy
import torch
w = torch.randn(3, requires_grad=True)
v = w * 2
best = copy.deepcopy(v)
print(best)
""", """import copy
import torch
w = torch.randn(3, requires_grad=True)
v = w * 2
best = v.detach().clone()
print(best)
"""),
    ("deepcopy-non-leaf", 9, "out.detach().clone()", """from copy import deepcopy
import torch
import torch.nn as nn

def keep_best(net, batch):
    best = None
    for _ in range(2):
        out = net(batch)
        best = deepcopy(out)
    return best

print(keep_best(nn.Linear(4, 2), torch.randn(3, 4)).shape)
""", None),
    ("dataloader-not-iterator", 5, "next(iter(loader))", """import torch
from torch.utils.data import DataLoader, TensorDataset
ds = TensorDataset(torch.randn(10, 3), torch.randn(10))
loader = DataLoader(ds, batch_size=4)
x, y = next(loader)
print(x.shape, y.shape)
""", """import torch
from torch.utils.data import DataLoader, TensorDataset
ds = TensorDataset(torch.randn(10, 3), torch.randn(10))
loader = DataLoader(ds, batch_size=4)
x, y = next(iter(loader))
print(x.shape, y.shape)
"""),
    ("dataloader-not-iterator", 8, "next(iter(self.train_dl))", """import torch
from torch.utils.data import DataLoader, TensorDataset

class Trainer:
    def __init__(self):
        self.train_dl = DataLoader(TensorDataset(torch.randn(8, 2)), batch_size=2)
    def peek(self):
        (batch,) = self.train_dl[0]
        return batch.shape

print(Trainer().peek())
""", None),
    ("parameters-not-called", 4, "model.parameters()", """import torch
import torch.nn as nn
model = nn.Linear(3, 1)
opt = torch.optim.Adam(model.parameters, lr=0.01)
print(opt)
""", """import torch
import torch.nn as nn
model = nn.Linear(3, 1)
opt = torch.optim.Adam(model.parameters(), lr=0.01)
print(opt)
"""),
    ("parameters-not-called", 6, "self.net.parameters()", """import torch
import torch.nn as nn
class Learner:
    def __init__(self):
        self.net = nn.Sequential(nn.Linear(2, 4), nn.ReLU(), nn.Linear(4, 1))
        self.optimizer = torch.optim.SGD(params=self.net.parameters, lr=0.1)

print(Learner().optimizer)
""", None),
]


@pytest.mark.parametrize("cid,root,fix_has,code,right", FIXED,
                         ids=[f"{c[0]}-{c[1]}" for c in FIXED])
def test_the_message_is_named_and_its_fix_tried(sandbox: Any, cid: str, root: int,
                                                 fix_has: str, code: str,
                                                 right: str | None) -> None:
    first = verified_diagnosis(sandbox, code, {cid}, root, fix_has)
    assert first.fix_check is not None and first.fix_check.zh
    for text in (first.title, first.explanation, first.fix):
        assert text.en and HAN.search(text.zh), text
    if right is not None:
        not_diagnosed(sandbox, cid, right)


# (id, failing line, words the English title has, the program, the program written right)
NAMED = [
    ("state-dict-used-as-model", 6, "`.eval`", """import torch
import torch.nn as nn
net = nn.Linear(3, 2)
torch.save(net.state_dict(), "w.pt")
model = torch.load("w.pt")
model.eval()
""", """import torch
import torch.nn as nn
net = nn.Linear(3, 2)
torch.save(net.state_dict(), "w.pt")
model = nn.Linear(3, 2)
model.load_state_dict(torch.load("w.pt"))
model.eval()
"""),
    ("state-dict-used-as-model", 9, "`.parameters`", """import torch
import torch.nn as nn

def restore(path):
    return torch.load(path)

torch.save(nn.Linear(2, 2).state_dict(), "ckpt.pt")
clf = restore("ckpt.pt")
print(sum(p.numel() for p in clf.parameters()))
""", None),
    ("cat-rank-mismatch", 4, "2 and 3", """import torch
a = torch.randn(4, 3)
b = torch.randn(4, 3, 1)
c = torch.cat([a, b], dim=1)
""", """import torch
a = torch.randn(4, 3)
b = torch.randn(4, 3, 1)
c = torch.cat([a, b.squeeze(2)], dim=1)
"""),
    ("cat-rank-mismatch", 6, "3 and 2", """import torch

def features(seq, extra):
    h = seq.mean(dim=1, keepdim=True)
    e = extra[:, 0]
    return torch.cat((h, e), -1)

print(features(torch.randn(2, 5, 8), torch.randn(2, 1, 4)).shape)
""", None),
    ("batchnorm-width", 4, "built for 10 features gets 20", """import torch
import torch.nn as nn
model = nn.Sequential(nn.Linear(4, 20), nn.BatchNorm1d(10), nn.ReLU())
out = model(torch.randn(8, 4))
""", """import torch
import torch.nn as nn
model = nn.Sequential(nn.Linear(4, 20), nn.BatchNorm1d(20), nn.ReLU())
out = model(torch.randn(8, 4))
"""),
    ("batchnorm-width", 10, "built for 16 features gets 32", """import torch
import torch.nn as nn

class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 32, 3)
        self.bn = nn.BatchNorm2d(16)
    def forward(self, img):
        return self.bn(self.conv(img))

print(Block()(torch.randn(2, 3, 8, 8)).shape)
""", None),
    ("tensor-from-strings", 3, "strings", """import torch
labels = ["cat", "dog", "cat"]
y = torch.tensor(labels)
""", """import torch
labels = ["cat", "dog", "cat"]
names = sorted(set(labels))
y = torch.tensor([names.index(label) for label in labels])
"""),
    ("tensor-from-strings", 4, "strings", """import torch

def load(rows):
    return torch.tensor([r.split(",") for r in rows])

print(load(["1.0,2.0", "3.0,4.0"]))
""", None),
    ("ragged-tensor", 3, "rows of 3 and of 2", """import torch
data = [[1.0, 2.0, 3.0], [4.0, 5.0]]
x = torch.tensor(data)
""", """import torch
data = [[1.0, 2.0, 3.0], [4.0, 5.0, 0.0]]
x = torch.tensor(data)
"""),
    ("ragged-tensor", 4, "rows of 4 and of 1", """import torch

def encode(sentences):
    return torch.tensor([[len(w) for w in s.split()] for s in sentences])

print(encode(["the cat sat down", "hello"]))
""", None),
    ("forward-missing-argument", 10, "'mask'", """import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 1)
    def forward(self, x, mask):
        return self.fc(x)
net = Net()
out = net(torch.randn(2, 3))
""", """import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 1)
    def forward(self, x, mask=None):
        return self.fc(x)
net = Net()
out = net(torch.randn(2, 3))
"""),
    ("forward-missing-argument", 12, "'target'", """import torch
import torch.nn as nn

class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(4, 1)
    def forward(self, inputs, target):
        return ((self.head(inputs) - target) ** 2).mean()

def evaluate(m):
    return m(torch.randn(5, 4))

print(evaluate(Scorer()))
""", None),
    ("numpy-object-array", 4, "NumPy array of Python objects", """import numpy as np
import torch
arr = np.array([np.array([1.0, 2.0]), np.array([3.0])], dtype=object)
x = torch.tensor(arr)
""", """import numpy as np
import torch
arr = np.array([np.array([1.0, 2.0]), np.array([3.0, 0.0])], dtype=np.float32)
x = torch.tensor(arr)
"""),
    ("numpy-object-array", 5, "NumPy array of Python objects", """import numpy as np
import torch

def to_batch(rows):
    return torch.from_numpy(np.array(rows, dtype=object))

print(to_batch([[1, "2"], [3, 4]]))
""", None),
    # a Function written for PyTorch before 1.3 (corpus15 trident-gradient-scale, after its
    # scoring): the message settles the change, shown untried
    ("legacy-autograd-function", 14, "`.apply`", """import torch
from torch.autograd import Function

class Scale(Function):
    def __init__(self, k):
        super().__init__()
        self.k = k
    def forward(self, x):
        return x * self.k
    def backward(self, g):
        return g * self.k

x = torch.ones(3, requires_grad=True)
Scale(2.0)(x).sum().backward()
""", """import torch
from torch.autograd import Function

class Scale(Function):
    @staticmethod
    def forward(ctx, x, k):
        ctx.k = k
        return x * k
    @staticmethod
    def backward(ctx, g):
        return g * ctx.k, None

x = torch.ones(3, requires_grad=True)
Scale.apply(x, 2.0).sum().backward()
"""),
]


@pytest.mark.parametrize("cid,line,words,code,right", NAMED,
                         ids=[f"{c[0]}-{c[1]}" for c in NAMED])
def test_the_message_is_named_at_its_line_in_both_languages(sandbox: Any, cid: str,
                                                             line: int, words: str, code: str,
                                                             right: str | None) -> None:
    first = first_for_error(sandbox, code)
    assert (first.id, first.root_line or first.line) == (cid, line), (
        first.id, first.line, first.title.en)
    assert not first.generic
    assert words in first.title.en, first.title.en
    for text in (first.title, first.explanation, first.fix):
        assert text.en and HAN.search(text.zh) and "{" not in text.en + text.zh, text
    if right is not None:
        not_diagnosed(sandbox, cid, right)

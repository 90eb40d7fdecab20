"""Checks of how the program is put together and of what an op was given, on small programs
of their own: the root line and a fix applied and re-run."""

from __future__ import annotations

from typing import Any

import pytest

from .runs import verified_diagnosis

CASES = [
    ('module-init-not-called', 5, 'super().__init__()', """import torch
import torch.nn as nn

class Net(nn.Module):
    def __init__(self, width):
        self.width = width
        self.fc = nn.Linear(3, width)

    def forward(self, x):
        return self.fc(x)

print(Net(4)(torch.randn(2, 3)))
"""),
    ('no-grad-fn', 5, 'torch.stack(outs)', """import torch

w = torch.ones(3, requires_grad=True)
outs = [(w * k).sum() for k in range(3)]
total = torch.tensor(outs)
total.sum().backward()
"""),
    ('view-not-contiguous', 5, 'y.reshape(-1)', """import torch

x = torch.randn(4, 6, requires_grad=True)
y = x.t()
z = y.view(-1)
z.sum().backward()
"""),
    ('backward-on-python-number', 5, 'return ((v - 2) ** 2).mean()', """import torch

w = torch.ones(3, requires_grad=True)
def loss_of(v):
    return ((v - 2) ** 2).mean().item()
loss = loss_of(w)
loss.backward()
"""),
    # the edge case of a loss function returns a plain number: the batch with nothing masked
    ('backward-on-python-number', 8, '(scores * 0).sum()', """import torch

net = torch.nn.Linear(3, 1)

def masked_loss(scores, labels, mask):
    picked = mask.nonzero().flatten()
    if picked.numel() == 0:
        return 0.0
    return ((scores[picked] - labels[picked]) ** 2).mean()

for keep in (torch.tensor([1, 0, 1, 1]), torch.zeros(4)):
    loss = masked_loss(net(torch.randn(4, 3)).squeeze(1), torch.randn(4), keep)
    loss.backward()
print(net.weight.grad)
"""),
    # `==` typed for `=`: the comparison is computed (and fails on the shapes) and dropped
    ('result-discarded', 10, 'x = self.proj(x)', """import torch
import torch.nn as nn

class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(6, 2)

    def forward(self, x):
        x == self.proj(x)
        return x

head = Head()
loss = nn.functional.cross_entropy(head(torch.randn(5, 6)), torch.tensor([0, 1, 0, 1, 1]))
loss.backward()
"""),
    ('bce-input-range', 5, 'BCEWithLogitsLoss', """import torch
import torch.nn as nn

head = nn.Linear(4, 1)
criterion = nn.BCELoss()
x = torch.randn(8, 4) * 5
labels = (x[:, :1] > 0).float()
loss = criterion(head(x), labels)
loss.backward()
"""),
    ('embedding-index-dtype', 5, '.long()', """import torch
import torch.nn as nn

emb = nn.Embedding(10, 4)
ids = torch.tensor([1.0, 4.0, 7.0])
print(emb(ids).sum())
"""),
    ('no-grad-fn', 5, 'create_graph=True', """import torch

x = torch.linspace(0, 1, 5, requires_grad=True)
y = torch.sin(3 * x)
dy = torch.autograd.grad(y.sum(), x)[0]
penalty = (dy ** 2).mean()
penalty.backward()
"""),
    ('params-in-plain-container', 7, 'nn.ModuleList(', """import torch
import torch.nn as nn

class Stack(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = [nn.Linear(4, 4) for _ in range(2)]
        self.out = nn.Linear(4, 1)

    def forward(self, x):
        for block in self.blocks:
            x = torch.relu(block(x))
        return self.out(x)

model = Stack()
opt = torch.optim.SGD(model.parameters(), lr=0.05)
x, y = torch.randn(16, 4), torch.randn(16, 1)
for _ in range(20):
    opt.zero_grad()
    ((model(x) - y) ** 2).mean().backward()
    opt.step()
"""),
    ("linear-in-features", 10, "images.flatten(1)", """import torch
import torch.nn as nn

class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(1 * 8 * 8, 10)

    def forward(self, images):
        return self.fc(images)

images = torch.randn(4, 1, 8, 8)
labels = torch.randint(0, 10, (4,))
loss = nn.functional.cross_entropy(Classifier()(images), labels)
loss.backward()
"""),
    ('backward-twice-carried', 9, 'tuple(s.detach() for s in state)', """import torch
import torch.nn as nn
lstm = nn.LSTM(4, 8, batch_first=True)
head = nn.Linear(8, 1)
opt = torch.optim.Adam(list(lstm.parameters()) + list(head.parameters()))
state = None
for i in range(3):
    x = torch.randn(2, 5, 4)
    out, state = lstm(x, state)
    loss = head(out[:, -1]).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""),
    ('embedding-index-range', 3, 'nn.Embedding(6, 3)', """import torch
import torch.nn as nn
emb = nn.Embedding(5, 3)
idx = torch.tensor([0, 2, 5])
print(emb(idx))
"""),
]


@pytest.mark.parametrize(("expected", "root", "fix_has", "code"), CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_program_check_names_the_root_line_and_a_verified_fix(
        sandbox: Any, expected: str, root: int, fix_has: str, code: str) -> None:
    verified_diagnosis(sandbox, code, {expected}, root, fix_has)

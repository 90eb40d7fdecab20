"""The checks of what an op was given (shapes, dtypes, labels, truth values), on small
programs of their own: the root cause is where the wrong operand was made or where the layer
was built, and the fix shown was applied and re-run."""

from __future__ import annotations

from typing import Any

import pytest

from .runs import verified_diagnosis

CASES = [
    # (expected ids, root line, fix must contain, program)
    ({"dtype-mismatch"}, 5, ".float()", """import numpy as np
import torch

def load(rows):
    return torch.as_tensor(np.random.rand(rows, 3))

layer = torch.nn.Linear(3, 2)
print(layer(load(4)))
"""),
    ({"dtype-mismatch"}, 6, "float32", """import torch

class Scale(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.ones(3, 2, dtype=torch.float64))

    def forward(self, x):
        return x @ self.w

print(Scale()(torch.ones(4, 3)))
"""),
    ({"view-invalid-shape"}, 10, "flatten(1)", """import torch
import torch.nn as nn

class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2 * 6 * 6, 3)

    def forward(self, x):
        return self.fc(x.view(-1, 2 * 6 * 6))

print(Tiny()(torch.randn(2, 2, 5, 5)).shape)
"""),
    ({"ce-batch-mismatch"}, 5, "flatten(1)", """import torch
import torch.nn.functional as F

scores = torch.randn(6, 2, 5)
flat = scores.reshape(-1, 5)
labels = torch.tensor([0, 1, 4, 2, 3, 0])
print(F.cross_entropy(flat, labels))
"""),
    ({"conv-channels"}, 4, "permute(0, 3, 1, 2)", """import torch

frames = [torch.rand(8, 8, 3) for _ in range(2)]
batch = torch.stack(frames)
conv = torch.nn.Conv2d(3, 4, kernel_size=3)
print(conv(batch).shape)
"""),
    ({"conv-channels"}, 3, "Conv2d(1", """import torch

conv = torch.nn.Conv2d(3, 4, kernel_size=3)
gray = torch.rand(2, 1, 8, 8)
print(conv(gray).shape)
"""),
    ({"ce-target-float-shape", "ce-target-dtype"}, 5, ".long()", """import numpy as np
import torch
import torch.nn as nn

answers = torch.tensor(np.array([[2.0], [0.0], [1.0]]))
scores = torch.randn(3, 3, requires_grad=True)
nn.CrossEntropyLoss()(scores, answers).backward()
"""),
    ({"ce-target-out-of-bounds"}, 4, "- 1", """import torch
import torch.nn.functional as F

grades = torch.tensor([1, 3, 2, 3, 1])
logits = torch.randn(5, 3, requires_grad=True)
F.cross_entropy(logits, grades).backward()
"""),
    ({"ce-target-out-of-bounds"}, 5, "Linear(4, 8)", """import torch
import torch.nn as nn

digits = torch.tensor([0, 7, 3, 5])
head = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 6))
loss = nn.functional.cross_entropy(head(torch.randn(4, 4)), digits)
loss.backward()
"""),
    ({"bool-ambiguous"}, 5, ".all()", """import torch

residual = torch.tensor([0.5, 0.2])
steps = 0
while residual > 0.01:
    residual = residual / 2
    steps += 1
print(steps)
"""),
    ({"bool-ambiguous"}, 4, "if use_mask else", """import torch

def pick(use_mask, mask, x):
    return use_mask and mask * x or x

print(pick(True, torch.ones(3), torch.arange(3.0)))
"""),
    # a label taken out of a 1-D tensor by position is 0-d: a batch of no labels
    ({"ce-batch-mismatch"}, 10, "tags[i].unsqueeze(0)", """import torch
import torch.nn as nn

head = nn.Linear(5, 4)
criterion = nn.CrossEntropyLoss()
words = torch.randn(6, 5)
tags = torch.randint(0, 4, (6,))
total = 0
for i in range(6):
    total = total + criterion(head(words[i]).unsqueeze(0), tags[i])
total.backward()
"""),
    # `cached or default`: the None-default idiom, fine until the cache holds a tensor
    ({"bool-ambiguous"}, 7, "is not None else", """import torch

cache = {"h": None}
inputs = torch.randn(3, 4)
for row in inputs:
    previous = cache["h"]
    h = previous or torch.zeros(4)
    cache["h"] = torch.tanh(h + row)
print(cache["h"].shape)
"""),
]


@pytest.mark.parametrize(("expected", "root", "fix_has", "code"), CASES,
                         ids=[f"{sorted(c[0])[0]}-{i}" for i, c in enumerate(CASES)])
def test_operand_check_finds_where_the_operand_was_made(
        sandbox: Any, expected: set[str], root: int, fix_has: str, code: str) -> None:
    assert sandbox.run(code).error is not None
    verified_diagnosis(sandbox, code, expected, root, fix_has)

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

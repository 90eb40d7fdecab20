"""A freezing flag a model stores for one of its parts and never acts on, on small programs
of its own: the run shows the part training, the change tried acts on the flag where it is
stored, and a flag that is off, or one the model honours, gets no such diagnosis."""

from __future__ import annotations

from typing import Any

from tutor.diagnosis.flow import Flow
from tutor.diagnosis.intent import freeze_flags, read_intent

from .runs import found_with_a_working_fix, not_diagnosed

PROGRAM = """import torch
import torch.nn as nn
torch.manual_seed(0)

class Classifier(nn.Module):
    def __init__(self, encoder_frozen=False):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
        self.head = nn.Linear(16, 3)
        self.encoder_frozen = encoder_frozen

    def forward(self, x):
        return self.head(self.encoder(x))

settings = {"encoder_frozen": True}
model = Classifier(**settings)
opt = torch.optim.Adam(model.parameters(), lr=0.01)
x, y = torch.randn(32, 8), torch.randint(0, 3, (32,))
for _ in range(5):
    loss = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
print(loss.item())
"""


def test_a_stored_flag_that_freezes_nothing_is_acted_on(sandbox: Any) -> None:
    found_with_a_working_fix(sandbox, "freeze-flag-unused", 10,
                             "+        if self.encoder_frozen: self.encoder.requires_grad_(False)",
                             PROGRAM)


def test_a_flag_that_is_off_is_not_blamed(sandbox: Any) -> None:
    not_diagnosed(sandbox, "freeze-flag-unused",
                  PROGRAM.replace('{"encoder_frozen": True}', '{"encoder_frozen": False}'))


def test_a_flag_the_model_honours_is_not_blamed(sandbox: Any) -> None:
    honoured = PROGRAM.replace(
        "        self.encoder_frozen = encoder_frozen\n",
        "        self.encoder_frozen = encoder_frozen\n"
        "        for p in self.encoder.parameters():\n"
        "            p.requires_grad = not encoder_frozen\n")
    not_diagnosed(sandbox, "freeze-flag-unused", honoured)


def test_the_flag_names_a_part_the_program_may_mean_to_freeze() -> None:
    flow = Flow.of(PROGRAM)
    assert flow is not None
    assert [(f.flag, f.part) for f in freeze_flags(flow)] == [("encoder_frozen", "encoder")]
    intent = read_intent(flow)
    assert intent.may_freeze("model.encoder.0.weight")
    assert not intent.may_freeze("model.head.weight")
    assert intent.freeze_of("model.encoder.0.weight") is None  # a flag is not a sure freeze

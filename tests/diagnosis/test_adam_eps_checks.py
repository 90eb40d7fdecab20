"""Adam over float16 weights with the default eps (0 in float16): a step whose gradients were
finite leaves NaN where a gradient was exactly 0. An eps float16 can hold is tried; a program
that already gives one, or keeps bfloat16 (whose range holds 1e-8), is not this."""

from __future__ import annotations

from typing import Any

from .runs import diagnoses_for

HALF_ADAM = """import torch
import torch.nn as nn
torch.manual_seed(0)
model = nn.Sequential(nn.Embedding(50, 8), nn.Flatten(), nn.Linear(24, 1)).half()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(4):
    tokens = torch.randint(0, 10, (4, 3))
    loss = model(tokens).float().pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, loss.item())
"""


def test_adam_over_float16_weights_gets_an_eps_float16_holds(sandbox: Any) -> None:
    first = diagnoses_for(sandbox, HALF_ADAM)[0]
    assert (first.id, first.root_line, first.fix_verified) == ("adam-eps-float16", 5, True)
    assert first.patch is not None and \
        "+opt = torch.optim.AdamW(model.parameters(), lr=1e-3, eps=1e-4)" in first.patch


def test_an_eps_float16_holds_is_not_this(sandbox: Any) -> None:
    code = HALF_ADAM.replace("lr=1e-3)", "lr=1e-3, eps=1e-3)")
    assert "adam-eps-float16" not in [d.id for d in diagnoses_for(sandbox, code)]


def test_bfloat16_weights_are_not_this(sandbox: Any) -> None:
    code = HALF_ADAM.replace(".half()", ".bfloat16()")
    assert "adam-eps-float16" not in [d.id for d in diagnoses_for(sandbox, code)]

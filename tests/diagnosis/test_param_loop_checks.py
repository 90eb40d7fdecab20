"""A hand-written optimizer whose step reads ``.grad`` of every parameter it holds, given a
model with a frozen layer (corpus14's dfw-optimizer-frozen-embedding, after its scoring): the
frozen parameter's ``.grad`` is None. The skip torch's optimizers make is tried in every loop
over the parameters; a None that is not a missing gradient is not blamed on them."""

from __future__ import annotations

from typing import Any

from .runs import first_for_error

PROGRAM = """import torch
import torch.nn as nn

class SignSGD(torch.optim.Optimizer):
    def __init__(self, params, lr=0.01):
        super().__init__(params, dict(lr=lr))

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            for p in group["params"]:
                p.add_(p.grad.sign(), alpha=-group["lr"])

model = nn.Sequential(nn.Embedding(50, 8), nn.Flatten(), nn.Linear(24, 2))
{freeze}opt = SignSGD(model.parameters())
tokens, labels = torch.randint(0, 50, (4, 3)), torch.tensor([0, 1, 1, 0])
for _ in range(3):
    opt.zero_grad()
    nn.functional.cross_entropy(model(tokens), labels).backward()
    opt.step()
"""


def test_a_frozen_parameter_in_a_hand_written_step_is_skipped(sandbox: Any) -> None:
    first = first_for_error(sandbox, PROGRAM.format(
        freeze="model[0].weight.requires_grad = False\n"))
    assert (first.id, first.root_line, first.fix_verified) == ("param-loop-none-grad", 12, True)
    assert "if p.grad is None: continue" in (first.patch or "")
    assert "`model.0.weight`" in first.title.en or "`model[0].weight`" in first.title.en
    assert any("line 15" in step.en and "requires_grad = False" in step.en
               for step in first.chain)
    assert "参数" in first.title.zh


def test_a_none_that_is_not_a_gradient_is_not_blamed_on_parameters(sandbox: Any) -> None:
    # every parameter gets a gradient; the None is a hyper-parameter the group lacks
    code = PROGRAM.format(freeze="").replace('alpha=-group["lr"]', 'alpha=group.get("eta").real')
    result = sandbox.run(code)
    assert result.outcome == "error", result.stdout
    first = first_for_error(sandbox, code)
    assert first.id != "param-loop-none-grad", first.title.en

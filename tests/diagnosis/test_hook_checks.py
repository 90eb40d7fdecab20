"""Module hooks that silently do nothing or something else: a module's forward called
directly skips its hooks; the legacy register_backward_hook sees its last operation's
gradients. Each change is tried and kept where the program then prints something else."""

from __future__ import annotations

from typing import Any

from .runs import diagnoses_for

DIRECT_FORWARD = """import torch
import torch.nn as nn
torch.manual_seed(0)
calls = []
scale = nn.Linear(3, 3)
scale.register_forward_hook(lambda module, inputs, output: calls.append(output.shape[0]))
head = nn.Linear(3, 1)
opt = torch.optim.SGD([*scale.parameters(), *head.parameters()], lr=0.1)
for step in range(3):
    x = torch.randn(5, 3)
    loss = head(scale.forward(x)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print("hook saw", len(calls), "calls")
"""


def test_a_forward_called_directly_on_a_hooked_module_is_called_through_the_module(
        sandbox: Any) -> None:
    first = diagnoses_for(sandbox, DIRECT_FORWARD)[0]
    assert (first.id, first.root_line, first.fix_verified) == ("forward-skips-hooks", 11, True)
    assert first.patch is not None and "head(scale(x))" in first.patch
    assert "`scale.forward(...)`" in first.title.en and "钩子" in first.title.zh


NO_HOOKS = DIRECT_FORWARD.replace(
    "scale.register_forward_hook(lambda module, inputs, output: calls.append(output.shape[0]))",
    "calls.append(0)")


def test_a_forward_called_directly_without_any_hook_is_left_alone(sandbox: Any) -> None:
    assert all(d.id != "forward-skips-hooks" for d in diagnoses_for(sandbox, NO_HOOKS))


LEGACY = """import torch
import torch.nn as nn
torch.manual_seed(0)
seen = {}


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.register_backward_hook(self.keep)

    def keep(self, module, grad_input, grad_output):
        seen["input"] = grad_input[0]

    def forward(self, x):
        return torch.tanh(self.fc(x)) * 2


block = Block()
x = torch.randn(6, 4, requires_grad=True)
block(x).sum().backward()
print("gradient reaching the block's input:", round(seen["input"].abs().sum().item(), 4))
print("x.grad:", round(x.grad.abs().sum().item(), 4))
"""


def test_the_legacy_module_backward_hook_is_registered_as_the_full_one(sandbox: Any) -> None:
    first = diagnoses_for(sandbox, LEGACY)[0]
    assert (first.id, first.root_line, first.fix_verified) == ("legacy-backward-hook", 11, True)
    assert first.patch is not None and "self.register_full_backward_hook(self.keep)" in first.patch
    assert first.chain and all(step.en and step.zh for step in first.chain)

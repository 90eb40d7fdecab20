"""Parameters the optimizer should update and never does, on small programs of their own:
left out of the optimizer beside a model it was given, built frozen by a constructor's
default, or cut from the graph by a call torch warned about. The fix shown made them train in
the sandbox; programs that freeze on purpose get none of these diagnoses."""

from __future__ import annotations

from typing import Any

import pytest

from tutor.diagnosis.reasoning import diagnose

from .runs import found_with_a_working_fix

DATA = """import torch
import torch.nn as nn
torch.manual_seed(0)
x = torch.randn(64, 4)
y = 3 * (x @ torch.tensor([[1.0], [-1.0], [2.0], [0.5]]))
"""

TOKENS = """import torch
import torch.nn as nn
torch.manual_seed(0)
tokens = torch.randint(0, 50, (64, 6))
labels = tokens[:, 0] % 3
"""

CASES = [
    # a learned scale of its own module, used by the loss, never given to the optimizer:
    # the optimizer gets it beside the model's parameters, not instead of them
    ("optimizer-wrong-params", 16, "[*model.parameters(), *scale.parameters()]", DATA + """
class Scale(nn.Module):
    def __init__(self):
        super().__init__()
        self.s = nn.Parameter(torch.ones(1))
    def forward(self, t):
        return t * self.s

model = nn.Linear(4, 1)
scale = Scale()
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for _ in range(40):
    loss = ((scale(model(x)) - y) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print(scale.s.item())
"""),
    # a bare tensor that requires grad (a temperature), left out of a list of parameters
    ("optimizer-wrong-params", 8, "[model.weight, model.bias, temperature]", DATA + """
def train(model, temperature):
    opt = torch.optim.Adam([model.weight, model.bias], lr=0.05)
    for _ in range(40):
        loss = ((model(x) / temperature - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()

model = nn.Linear(4, 1)
temperature = torch.ones(1, requires_grad=True)
train(model, temperature)
print(temperature)
"""),
    # pretrained word vectors meant to be fine-tuned: from_pretrained freezes by default,
    # and the program measures how far they moved
    ("params-frozen-when-built", 14, "freeze=False", TOKENS + """vectors = torch.randn(50, 8)

class Classifier(nn.Module):
    def __init__(self, pretrained):
        super().__init__()
        if pretrained is None:
            self.embed = nn.Embedding(50, 8)
        else:
            self.embed = nn.Embedding.from_pretrained(pretrained)
        self.out = nn.Linear(8, 3)
    def forward(self, t):
        return self.out(self.embed(t).mean(1))

model = Classifier(vectors)
opt = torch.optim.Adam(model.parameters(), lr=0.05)
before = model.embed.weight.detach().clone()
for _ in range(20):
    loss = nn.functional.cross_entropy(model(tokens), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
print((model.embed.weight - before).abs().max().item())
"""),
    # a block checkpointed on an input that does not require grad: the reentrant variant
    # runs it without a graph (torch warns "Gradients will be None"), the block never trains
    ("params-unreached-warned", 14, "use_reentrant=False", DATA + """\
from torch.utils.checkpoint import checkpoint

block = nn.Sequential(nn.Linear(4, 16), nn.Tanh())
head = nn.Linear(16, 1)
opt = torch.optim.SGD([*block.parameters(), *head.parameters()], lr=0.05)
first = block[0].weight.detach().clone()
for _ in range(30):
    opt.zero_grad()
    hidden = checkpoint(block, x, use_reentrant=True)
    loss = ((head(hidden) - y) ** 2).mean()
    loss.backward()
    opt.step()
print((block[0].weight - first).abs().max().item())
"""),
]


@pytest.mark.parametrize(("expected", "root", "fix_has", "code"), CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_parameters_that_never_train_get_the_change_that_trains_them(
        sandbox: Any, expected: str, root: int, fix_has: str, code: str) -> None:
    found_with_a_working_fix(sandbox, expected, root, fix_has, code)


EMBEDDING_HEAD = TOKENS + """{embed}
head = nn.Linear(8, 3)
opt = torch.optim.Adam([*embed.parameters(), *head.parameters()], lr=0.05)
for _ in range(20):
    loss = nn.functional.cross_entropy(head(embed(tokens).mean(1)), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
print({shown})
"""


def test_pretrained_vectors_frozen_on_purpose_are_not_a_bug(sandbox: Any) -> None:
    # frozen embeddings under a head that trains, nothing looking at them: a choice
    code = EMBEDDING_HEAD.format(
        embed="embed = nn.Embedding.from_pretrained(torch.randn(50, 8))", shown="loss.item()")
    found = diagnose(code, sandbox.run(code), sandbox)
    assert "params-frozen-when-built" not in {d.id for d in found}


def test_a_module_frozen_by_a_statement_is_not_built_frozen(sandbox: Any) -> None:
    # requires_grad_(False) written out is a decision (check_frozen's to question), not a
    # constructor's default
    code = EMBEDDING_HEAD.format(embed="embed = nn.Embedding(50, 8)\nembed.requires_grad_(False)",
                                 shown="embed.weight.sum().item()")
    found = diagnose(code, sandbox.run(code), sandbox)
    assert not {"params-frozen-when-built", "params-unreached-warned"} & {d.id for d in found}

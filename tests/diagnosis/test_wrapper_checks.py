"""A model wrapped for several devices and read as if it were not, or the other way round:
the wrapper passes on only ``forward``, and a model never wrapped (the wrap is conditional)
has no ``.module``. The attribute is reached the way the object has it, and tried."""

from __future__ import annotations

from typing import Any

from .runs import diagnoses_for

HEAD = """import torch
import torch.nn as nn
torch.manual_seed(0)


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(5, 3)

    def forward(self, x):
        return self.body(x)

    def describe(self):
        return f"{self.body.weight.norm().item():.3f}"


"""

WRAPPED = HEAD + """model = nn.DataParallel(Tagger())
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(2):
    loss = model(torch.randn(4, 5)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, model.describe())
"""


def test_a_method_of_the_wrapped_model_is_reached_through_module(sandbox: Any) -> None:
    first = diagnoses_for(sandbox, WRAPPED)[0]
    assert (first.id, first.root_line, first.fix_verified) == (
        "wrapper-hides-attribute", 25, True)
    assert first.patch is not None and "model.module.describe()" in first.patch
    assert "line 18" in first.explanation.en and "`describe`" in first.title.en


MISSING_EVERYWHERE = HEAD + """model = nn.DataParallel(Tagger())
print(model.summary())
"""


def test_an_attribute_the_wrapped_model_lacks_too_is_not_blamed_on_the_wrapper(
        sandbox: Any) -> None:
    # `model.module.summary` fails as well: the trial refutes the claim, so it is not made
    assert not [d for d in diagnoses_for(sandbox, MISSING_EVERYWHERE)
                if d.id == "wrapper-hides-attribute"]


CONDITIONAL = HEAD + """class Trainer:
    def __init__(self, devices=torch.cuda.device_count()):
        self.net = Tagger()
        if devices > 1:
            self.net = nn.DataParallel(self.net)

    def report(self):
        return self.net.module.describe()


print(Trainer().report())
"""


def test_module_of_a_model_wrapped_only_on_several_devices_keeps_both_paths(
        sandbox: Any) -> None:
    first = diagnoses_for(sandbox, CONDITIONAL)[0]
    assert (first.id, first.root_line, first.fix_verified) == ("module-of-unwrapped", 25, True)
    assert first.patch is not None and 'getattr(self.net, "module", self.net)' in first.patch
    assert any("`devices > 1`" in step.en for step in first.chain)


NEVER = HEAD + """net = Tagger()
print(net.module.describe())
"""


def test_module_of_a_model_never_wrapped_is_the_model_itself(sandbox: Any) -> None:
    first = diagnoses_for(sandbox, NEVER)[0]
    assert (first.id, first.root_line, first.fix_verified) == ("module-of-unwrapped", 19, True)
    assert first.patch is not None and "+print(net.describe())" in first.patch

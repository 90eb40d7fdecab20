"""Weights read from a checkpoint and never loaded into the model: found from the source (a
name bound to them that nothing reads, no load_state_dict), and the change tried loads them
into a model the program built, kept only where what the program prints then changes."""

from __future__ import annotations

from typing import Any

from tutor.diagnosis.reasoning import diagnose

from .runs import found_with_a_working_fix, not_diagnosed, verified_diagnosis

PROGRAM = """import torch
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)

def evaluate(checkpoint, x):
    model = Net()
    weights = checkpoint["model"]
    model.eval()
    with torch.no_grad():
        return model(x)

trained = Net()
with torch.no_grad():
    trained.fc.weight.fill_(1.0)
saved = {"model": trained.state_dict(), "epoch": 3}
print(evaluate(saved, torch.ones(1, 4)))
"""


def test_weights_bound_and_never_read_are_loaded_into_the_model(sandbox: Any) -> None:
    found_with_a_working_fix(sandbox, "weights-never-loaded", 14,
                             "model.load_state_dict(weights)", PROGRAM)


def test_weights_that_are_loaded_are_not_blamed(sandbox: Any) -> None:
    right = PROGRAM.replace('    weights = checkpoint["model"]\n',
                            '    weights = checkpoint["model"]\n'
                            '    model.load_state_dict(weights)\n')
    not_diagnosed(sandbox, "weights-never-loaded", right)


def test_a_copy_kept_to_compare_with_is_not_blamed(sandbox: Any) -> None:
    """A state dict that is read afterwards (compared, printed) is used."""
    used = PROGRAM.replace("        return model(x)",
                           "        return model(x), len(weights)")
    not_diagnosed(sandbox, "weights-never-loaded", used)


def test_a_key_read_from_a_bare_state_dict_names_the_save(sandbox: Any) -> None:
    # the latest weights are saved bare, the best ones in a dict: reading 'state_dict' from
    # the latest fails; the bare save is named and saved as the other one is (reading the
    # file whole would break reading the best one, which the trial would show)
    from .runs import first_for_error

    code = """import io
import torch
import torch.nn as nn
net = nn.Linear(3, 2)
last, best = io.BytesIO(), io.BytesIO()
torch.save({"state_dict": net.state_dict(), "step": 10}, best)
torch.save(net.state_dict(), last)


def restore(stream):
    stream.seek(0)
    checkpoint = torch.load(stream)
    fresh = nn.Linear(3, 2)
    fresh.load_state_dict(checkpoint["state_dict"])
    return fresh


print(restore(best).weight.shape)
print(restore(last).weight.shape)
"""
    first = first_for_error(sandbox, code)
    assert (first.id, first.root_line, first.fix_verified) == ("checkpoint-key-missing", 7, True)
    assert first.patch is not None and \
        "+torch.save({'state_dict': net.state_dict()}, last)" in first.patch
    assert "line 6 saves a dict that has it" in first.explanation.en
    assert "第 6 行保存的字典里有它" in first.explanation.zh


WHOLE = """import io

import torch
import torch.nn as nn

net = nn.Linear(3, 2)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
buffer = io.BytesIO()
torch.save({{"epoch": 4, "model_state": net.state_dict(), "optim": opt.state_dict()}}, buffer)
buffer.seek(0)
checkpoint = torch.load(buffer)
restored = nn.Linear(3, 2)
restored.load_state_dict({given})
print(restored.weight.shape)
"""


def test_a_whole_checkpoint_given_to_load_state_dict_gets_its_model_entry(
        sandbox: Any) -> None:
    code = WHOLE.format(given="checkpoint")
    first = verified_diagnosis(sandbox, code, {"whole-checkpoint-loaded"}, 13,
                               "checkpoint['model_state']")
    assert "'epoch'" in first.explanation.en and "'optim'" in first.explanation.zh
    assert sandbox.run(WHOLE.format(given="checkpoint['model_state']")).ok


def test_keys_of_another_model_are_not_a_whole_checkpoint(sandbox: Any) -> None:
    # unexpected keys with dots are another model's parameters: not this mistake
    code = WHOLE.format(given="nn.Sequential(nn.Linear(3, 2)).state_dict()")
    result = sandbox.run(code)
    assert result.error is not None and "Unexpected key(s)" in result.error.message
    assert "whole-checkpoint-loaded" not in {d.id for d in diagnose(code, result, sandbox)}

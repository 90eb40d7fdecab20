"""A fix must not make an error go away by dropping what the failing line did: an in-place
change of a container's part (a loop over the channels of an image) rewritten out of place
into a loop variable that nothing reads. Read from the two programs, before any run."""

from __future__ import annotations

from typing import Any

from tutor.diagnosis.reasoning import diagnose
from tutor.diagnosis.verify import loses_change

DENORMALISE = """import torch
import torch.nn as nn
torch.manual_seed(0)
net = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                    nn.Flatten(), nn.Linear(4, 2))
img = torch.rand(3, 8, 8, requires_grad=True)
net(img.unsqueeze(0))[0, 1].backward()
mean, std = [0.5, 0.5, 0.5], [0.2, 0.2, 0.2]
for channel, m, s in zip(img, mean, std):
    channel.mul_(s).add_(m)
print(img.min().item())
"""


def test_a_rewrite_into_a_loop_variable_nothing_reads_loses_the_change() -> None:
    lost = DENORMALISE.replace("    channel.mul_(s).add_(m)",
                               "    channel = channel.mul(s).add_(m)")
    said = loses_change(DENORMALISE, lost)
    assert said is not None and "line 10" in said.en and "`channel`" in said.en and said.zh


def test_a_rewrite_whose_result_is_read_keeps_the_change() -> None:
    code = "import torch\nx = torch.ones(3)\nx += 1\nprint(x)\n"
    assert loses_change(code, code.replace("x += 1", "x = x + 1")) is None
    looped = ("import torch\nh = torch.ones(2)\nfor _ in range(3):\n    h.mul_(2)\n"
              "print(h)\n")  # read again at the next pass and after the loop
    assert loses_change(looped, looped.replace("h.mul_(2)", "h = h.mul(2)")) is None


def test_the_denormalise_error_gets_no_fix_that_drops_it(sandbox: Any) -> None:
    result = sandbox.run(DENORMALISE)
    assert not result.ok
    for found in diagnose(DENORMALISE, result, sandbox):
        assert not (found.fix_verified and "channel = channel" in (found.patch or ""))

"""A number PyYAML reads as a string (tutor/diagnosis/config_checks.py), on a program of its
own: the config's line is the root, and the number written with a dot is the change tried."""

from __future__ import annotations

from typing import Any

from tutor.diagnosis.reasoning import diagnose

from .runs import verified_diagnosis

CONFIG = '''import torch
import yaml

SETTINGS = """
model:
  width: 4
train:
  lr: {lr}
  momentum: 0.9
"""


def make_optimizer(params, cfg):
    return torch.optim.SGD(params, **cfg["train"])


cfg = yaml.safe_load(SETTINGS)
w = torch.zeros(cfg["model"]["width"], requires_grad=True)
opt = make_optimizer([w], cfg)
(w - 1).pow(2).sum().backward()
opt.step()
print(w)
'''


def test_an_exponent_without_a_dot_in_a_yaml_config_is_the_root(sandbox: Any) -> None:
    code = CONFIG.format(lr="1e-3")
    result = sandbox.run(code)
    assert result.error is not None and result.error.type == "TypeError"
    assert result.error.line != 8  # torch fails where the optimizer is built, not in the config
    first = verified_diagnosis(sandbox, code, {"yaml-number-as-string"}, 8, "lr: 1.0e-3")
    assert "'1e-3'" in first.title.en and "1e-3" in first.title.zh
    right = CONFIG.format(lr="1.0e-3")
    assert sandbox.run(right).ok


def test_a_string_met_without_a_yaml_config_is_not_this(sandbox: Any) -> None:
    code = CONFIG.replace("cfg = yaml.safe_load(SETTINGS)",
                          'cfg = {"model": {"width": 4}, "train": {"lr": "1e-3"}}')
    found = diagnose(code, sandbox.run(code), sandbox)
    assert "yaml-number-as-string" not in {d.id for d in found}

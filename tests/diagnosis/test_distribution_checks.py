"""A torch.distributions distribution given a value outside its parameter's constraint, on
small programs of its own: the argument is found by name or by place (the run's callee
evidence gives the parameters), and the change tried maps it into range or passes scores as
logits; a program that already does so is not blamed."""

from __future__ import annotations

from typing import Any

from .runs import first_for_error, verified_diagnosis

VAE = """import torch
import torch.nn as nn
from torch.distributions import Normal

class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 6)

    def forward(self, x):
        mu, std = self.net(x).chunk(2, dim=-1)
        return mu, std

enc = Encoder()
x = torch.randn(32, 4)
mu, std = enc(x)
q = Normal(mu, std)
q.rsample().pow(2).mean().backward()
"""

POLICY = """import torch
import torch.nn as nn
from torch.distributions import Categorical

policy = nn.Linear(3, 2)
state = torch.randn(16, 3)
scores = policy(state)
dist = Categorical(probs=scores)
action = dist.sample()
(-dist.log_prob(action).mean()).backward()
"""

COIN = """import torch
import torch.nn as nn

head = nn.Linear(5, 1)
features = torch.randn(8, 5)
p = head(features)
flip = torch.distributions.Bernoulli(p)
print(flip.sample())
"""


def test_a_scale_straight_out_of_a_layer_is_made_positive_where_it_is_given(sandbox: Any
                                                                             ) -> None:
    first = verified_diagnosis(sandbox, VAE, {"distribution-constraint"}, 17, "softplus(std)")
    assert "scale" in first.title.en and "positive" in first.title.en
    assert any("line 16" in step.en for step in first.chain)  # where std was made


def test_a_log_scale_is_exponentiated(sandbox: Any) -> None:
    code = VAE.replace("std", "log_std")
    verified_diagnosis(sandbox, code, {"distribution-constraint"}, 17, "log_std.exp()")


def test_scores_given_as_probs_by_name_are_passed_as_logits(sandbox: Any) -> None:
    verified_diagnosis(sandbox, POLICY, {"distribution-constraint"}, 8, "logits=scores")


def test_scores_given_as_probs_by_place_are_found_through_the_signature(sandbox: Any) -> None:
    first = verified_diagnosis(sandbox, COIN, {"distribution-constraint"}, 7, "logits=p")
    assert "`probs`" in first.title.en and "Bernoulli" in first.title.en


def test_the_run_reads_the_distributions_parameters(sandbox: Any) -> None:
    result = sandbox.run(COIN, instrument=True)
    assert result.error is not None and result.error.callee is not None
    assert result.error.callee.parameter == "probs"
    assert result.error.callee.signature.startswith("(probs=None, logits=None")


def test_a_scale_of_nan_is_not_called_negative(sandbox: Any) -> None:
    """torch's message shows the values: nan breaks the constraint too, but the question
    there is where the nan came from, which this diagnosis does not answer."""
    code = VAE.replace("q = Normal(mu, std)", "q = Normal(mu, std * float('nan'))")
    result = sandbox.run(code)
    assert result.error is not None and "nan" in result.error.message
    first = first_for_error(sandbox, code)
    assert first.id != "distribution-constraint"
    # the run names the parameter because of its constraint, not because it is missing
    assert "calls it without" not in first.fix.en and "break the constraint" in first.fix.en

"""A value passed from one network's computation into another's loss, still carrying its
graph (an actor-critic's advantage): the failing backward() runs back into the other network,
whose graph an earlier backward() freed or whose weights its optimizer stepped in place. The
value is only a weight in this loss: detached where the loss uses it, tried, and the loss's
own network still learns. A network trained by the same optimizer as the loss (a shared
encoder) is not another network: nothing is detached there."""

from __future__ import annotations

from typing import Any

from .runs import diagnoses_for, verified_diagnosis

ACTOR_CRITIC = """import torch
import torch.nn as nn
torch.manual_seed(0)


class Value:
    def __init__(self):
        self.v_net = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
        self.opt = torch.optim.SGD(self.v_net.parameters(), lr=0.05)

    def update(self, state, reward):
        advantage = reward - self.v_net(state)
        self.opt.zero_grad()
        (advantage ** 2).mean().backward({retain})
        self.opt.step()
        return advantage


class Policy:
    def __init__(self):
        self.pi = nn.Sequential(nn.Linear(3, 2), nn.LogSoftmax(dim=1))
        self.opt = torch.optim.SGD(self.pi.parameters(), lr=0.05)

    def update(self, state, action, weight):
        log_p = self.pi(state)[0, action]
        loss = -(log_p * weight).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()


critic, actor = Value(), Policy()
for t in range(4):
    state = torch.randn(1, 3)
    adv = critic.update(state, torch.tensor([[1.0]]))
    actor.update(state, t % 2, adv)
print("done")
"""


def test_an_advantage_with_the_critics_graph_is_detached_where_the_actor_uses_it(
        sandbox: Any) -> None:
    # retain_graph=True in the critic: the critic's step then changes the weights the
    # actor's backward() runs back into (in place)
    code = ACTOR_CRITIC.replace("{retain}", "retain_graph=True")
    first = verified_diagnosis(sandbox, code, {"inplace-modified-output"}, 26,
                               "weight.detach()")
    assert first.fix_check is not None and "`self.pi.0.weight`" in first.fix_check.en
    assert any("another network" in step.en and "另一个网络" in step.zh
               for step in first.chain)


def test_without_retain_graph_the_same_value_is_detached_not_the_graph_retained(
        sandbox: Any) -> None:
    # the critic's backward() freed its graph: retain_graph would make the error go away
    # and let the actor's loss train the critic
    code = ACTOR_CRITIC.replace("{retain}", "")
    first = verified_diagnosis(sandbox, code, {"backward-twice"}, 26, "weight.detach()")
    assert "retain_graph" not in (first.patch or "")


SHARED_ENCODER = """import torch
import torch.nn as nn
torch.manual_seed(0)
enc, head_a, head_b = nn.Linear(4, 8), nn.Linear(8, 1), nn.Linear(8, 1)
params = [*enc.parameters(), *head_a.parameters(), *head_b.parameters()]
opt = torch.optim.SGD(params, lr=0.1)


def second_head(feat, y):
    loss_b = ((head_b(feat) - y) ** 2).mean()
    loss_b.backward()


for step in range(3):
    x, y = torch.randn(16, 4), torch.randn(16, 1)
    feat = enc(x)
    opt.zero_grad()
    loss_a = ((head_a(feat) - y) ** 2).mean()
    opt.step()
    loss_a.backward()
    second_head(feat, y)
    opt.step()
"""


def test_a_shared_encoder_trained_by_the_same_optimizer_is_not_detached(sandbox: Any) -> None:
    result = sandbox.run(SHARED_ENCODER)
    assert result.error is not None and "second time" in result.error.message
    found = diagnoses_for(sandbox, SHARED_ENCODER, result)
    assert found
    assert not any("feat.detach()" in (d.patch or "") for d in found), [d.patch for d in found]


TWO_STAGE = """import torch
import torch.nn as nn
torch.manual_seed(0)


class TwoStage(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 4))
        self.second = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 4))

    def forward(self, x, weight):
        coarse = self.first(x * weight)
        return coarse, self.second(coarse)


def train(model, critic, x, weight):
    opt_first = torch.optim.Adam(model.first.parameters(), lr=1e-3)
    opt_all = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(2):
        coarse, fine = model(x, weight)
        loss_coarse = (torch.abs(coarse - x) * weight).mean()
        loss_fine = (torch.abs(fine - x) * weight).mean()
        opt_first.zero_grad()
        loss_coarse.backward(retain_graph=True)
        opt_first.step()
        loss = 0.5 * loss_coarse + loss_fine - critic(fine).mean()
        opt_all.zero_grad()
        loss.backward()
        opt_all.step()


x = torch.randn(6, 4)
weight = (torch.rand(6, 4) > 0.5).float()
train(TwoStage(), nn.Sequential(nn.Linear(4, 4), nn.LeakyReLU(0.2), nn.Linear(4, 1)), x, weight)
"""


def test_a_value_whose_detaching_does_not_fix_it_is_not_said_to_carry_a_graph(
        sandbox: Any) -> None:
    # `weight` is data computed by a call: detaching it changes nothing, so the claim that
    # it carries another network's graph is not made anywhere, lead or alternative
    found = diagnoses_for(sandbox, TWO_STAGE)
    assert found and found[0].id == "inplace-modified-output"
    said = " ".join(f"{d.explanation.en} {d.tell_apart.en if d.tell_apart else ''} "
                    f"{' '.join(step.en for step in d.chain)}" for d in found)
    assert "another network" not in said

"""A tried fix must keep what the program did: an optimizer the program built for a part of
the model is the one to step it (not another one that would let a second loss train it);
state a module carries from call to call stays the module's; a parameter a backward()
reaches must still find its gradient at a step."""

from __future__ import annotations

from typing import Any

from tutor.diagnosis.verify import hides_bug

from .runs import diagnoses_for, first_for_error, verified_diagnosis

GAN = """import torch
import torch.nn as nn
torch.manual_seed(0)
gen = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 4))
disc = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
opt_g = torch.optim.Adam(gen.parameters(), lr=1e-3)
opt_d = torch.optim.Adam(disc.parameters(), lr=1e-3)
for it in range(20):
    real = torch.randn(16, 4) + 2
    fake = gen(torch.randn(16, 4))
    opt_d.zero_grad()
    loss_d = torch.relu(1 - disc(real)).mean() + torch.relu(1 + disc(fake.detach())).mean()
    loss_d.backward()
    opt_g.zero_grad()
    loss_g = -disc(fake).mean()
    loss_g.backward()
    opt_g.step()
print(loss_d.item(), disc[0].weight.norm().item())
"""


def test_an_optimizer_built_for_a_part_that_never_steps_gets_its_step(sandbox: Any) -> None:
    top = verified_diagnosis(sandbox, GAN, {"step-missing"}, 13, "opt_d.step()")
    assert "opt_d.step()" in top.fix.en
    found = diagnoses_for(sandbox, GAN)
    # the discriminator's parameters are not handed to the generator's optimizer
    assert not any("opt_g" in (f.patch or "") and "disc" in (f.patch or "") for f in found)


CACHE = """import torch
import torch.nn as nn


class Cached(nn.Module):
    def __init__(self):
        super().__init__()
        self.cache = nn.Parameter(torch.zeros(2, 6, 4), requires_grad=False)
        self.proj = nn.Linear(4, 4)

    def forward(self, x):
        self.cache = torch.roll(self.cache, -x.size(1), dims=1)
        return self.proj(self.cache + x.mean()).mean(dim=1)


model = Cached()
opt = torch.optim.SGD(model.proj.parameters(), lr=0.1)
for step in range(3):
    loss = model(torch.randn(2, 2, 4)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(loss.item())
"""


def test_state_kept_in_a_parameter_that_does_not_learn_becomes_a_buffer(sandbox: Any) -> None:
    top = first_for_error(sandbox, CACHE)
    assert top.id == "parameter-assigned" and top.fix_verified
    assert 'register_buffer("cache", torch.zeros(2, 6, 4))' in top.fix.en
    # the recurrence is kept: nothing rewrites self.cache into a local name
    assert "cache = torch.roll" not in (top.patch or "").replace("self.cache = torch.roll", "")


def test_a_learned_parameter_replaced_by_a_value_computed_from_it_stays(sandbox: Any) -> None:
    code = CACHE.replace(", requires_grad=False)", ")").replace(
        "model.proj.parameters()", "model.parameters()")
    top = first_for_error(sandbox, code)
    assert top.id == "parameter-assigned" and "register_buffer" not in top.fix.en


TWO_LOSSES = """import torch
import torch.nn as nn
torch.manual_seed(0)
a, b = nn.Linear(3, 1), nn.Linear(3, 1)
opt = torch.optim.SGD([*a.parameters(), *b.parameters()], lr=0.1)
for it in range(4):
    x = torch.randn(8, 3)
    first = a(x).pow(2).mean()
    second = b(x).pow(2).mean()
    opt.zero_grad()
    first.backward()
    second.backward()
    opt.step()
    print(first.item(), second.item())
"""


def test_a_fix_after_which_a_reached_parameter_finds_no_gradient_at_any_step_is_refused(
        sandbox: Any) -> None:
    original = sandbox.run(TWO_LOSSES, instrument=True)
    assert original.ok
    # clearing between the two backward passes drops the first loss's gradient: `a` is
    # reached, and no step finds its gradient, where the program's own run stepped it
    cleared = TWO_LOSSES.replace("    opt.zero_grad()\n    first.backward()\n",
                                 "    first.backward()\n    opt.zero_grad()\n")
    fixed = sandbox.run(cleared, instrument=True)
    assert fixed.ok and fixed.evidence is not None
    assert {p.name for p in fixed.evidence.params if p.steps_without_grad} == {
        "a.weight", "a.bias"}
    said = hides_bug(original, fixed)
    assert said is not None and "`a.weight`" in said.en and "cleared" in said.en and said.zh
    # a change that keeps every gradient at the step passes
    kept = TWO_LOSSES.replace("first.backward()\n    second.backward()",
                              "(first + second).backward()")
    both = sandbox.run(kept, instrument=True)
    assert both.ok and hides_bug(original, both) is None


def test_the_evidence_tells_a_gradient_cleared_before_every_step(sandbox: Any) -> None:
    code = ("import torch\nw = torch.ones(2, requires_grad=True)\n"
            "opt = torch.optim.SGD([w], lr=0.1)\nfor _ in range(3):\n"
            "    (w * 2).sum().backward()\n    opt.zero_grad()\n    opt.step()\n")
    ev = sandbox.run(code, instrument=True).evidence
    assert ev is not None
    (w,) = [p for p in ev.params if p.name == "w"]
    assert w.steps_without_grad and w.reached and w.changed is False
    ok = sandbox.run(code.replace("    opt.zero_grad()\n    opt.step()\n",
                                  "    opt.step()\n    opt.zero_grad()\n"), instrument=True)
    assert ok.evidence is not None and not ok.evidence.params[0].steps_without_grad


THROUGH_FROZEN = """import torch
import torch.nn as nn
torch.manual_seed(0)
net = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
net.eval()
shift = torch.tensor(0.5, requires_grad=True)
opt = torch.optim.SGD([shift], lr=0.5)
base = torch.randn(16, 4)


def features(x):
    return net(torch.tensor(x + shift))


for step in range(5):
    loss = features(base).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, round(loss.item(), 4), shift.grad)
"""


def test_a_leaf_optimized_through_a_copy_is_cut_not_short_of_the_models_parameters(
        sandbox: Any) -> None:
    """What the optimizer holds is what the program trains: the copy that cuts it off is
    the cause, not an optimizer that misses the (frozen) model's parameters."""
    assert sandbox.run(THROUGH_FROZEN).ok
    top = verified_diagnosis(sandbox, THROUGH_FROZEN, {"graph-cut-silent"}, 12,
                             "net(x + shift)")
    assert "`x + shift` itself" in top.fix.en


def test_a_gradient_never_given_is_not_one_cleared(sandbox: Any) -> None:
    """A parameter behind a Function whose backward passes nothing back is reached by the
    graph, and no step finds a gradient for it: none was ever given, none was cleared."""
    code = ("import torch\n\n\nclass Stop(torch.autograd.Function):\n"
            "    @staticmethod\n    def forward(ctx, x):\n        return x.round()\n\n"
            "    @staticmethod\n    def backward(ctx, g):\n        return None\n\n\n"
            "w = torch.ones(2, requires_grad=True)\nb = torch.ones(2, requires_grad=True)\n"
            "opt = torch.optim.SGD([w, b], lr=0.1)\nfor _ in range(3):\n"
            "    opt.zero_grad()\n    (Stop.apply(w * 2) + b).sum().backward()\n"
            "    opt.step()\n")
    ev = sandbox.run(code, instrument=True).evidence
    assert ev is not None
    by_name = {p.name: p for p in ev.params}
    assert by_name["w"].reached and by_name["w"].grad_none
    assert not by_name["w"].steps_without_grad and not by_name["b"].steps_without_grad


ACTOR_CRITIC = """import torch
import torch.nn as nn
torch.manual_seed(0)


class Actor:
    def __init__(self):
        self.net = nn.Sequential(nn.Linear(4, 2), nn.Softmax(dim=1))
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=1e-3)

    def learn(self, s, td):
        loss = -(torch.log(self.net(s)[0, 0]) * td).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()


class Critic:
    def __init__(self):
        self.net = nn.Linear(4, 1)
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=1e-2)

    def learn(self, s, r):
        td = r - self.net(s)
        self.optimizer.zero_grad()
        (td ** 2).sum().backward()
        self.optimizer.step()
        return td.detach()


actor, critic = Actor(), Critic()
for t in range(5):
    s = torch.randn(1, 4)
    actor.learn(s, critic.learn(s, 1.0))
print(critic.net.weight.sum().item())
"""


def test_a_step_deleted_from_one_of_two_same_named_optimizers_is_refused(
        sandbox: Any) -> None:
    """`self.optimizer` of the actor and of the critic are two optimizers: deleting the
    critic's step leaves a `self.optimizer` stepping, and the critic no longer learns."""
    original = sandbox.run(ACTOR_CRITIC, instrument=True)
    assert original.ok and original.evidence is not None
    assert {s.where for s in original.evidence.steps} == {"Actor.learn", "Critic.learn"}
    lines = ACTOR_CRITIC.splitlines(keepends=True)
    step = [i for i, line in enumerate(lines) if "self.optimizer.step()" in line][1]
    fixed = sandbox.run("".join(lines[:step] + lines[step + 1:]), instrument=True)
    said = hides_bug(original, fixed)
    assert said is not None and "never takes a step" in said.en and "`self.net.weight`" in said.en
    assert "持有" in said.zh and "） 一次" not in said.zh
    assert hides_bug(original, sandbox.run(ACTOR_CRITIC, instrument=True)) is None


def test_the_critics_step_is_not_deleted_to_silence_the_actors_error(sandbox: Any) -> None:
    """The TD error returned with its graph: the actor's backward() runs into the critic's
    graph after the critic's step. Deleting that step runs, and the critic never learns."""
    code = ACTOR_CRITIC.replace("        return td.detach()", "        return td").replace(
        "(td ** 2).sum().backward()", "(td ** 2).sum().backward(retain_graph=True)").replace(
        "self.net = nn.Linear(4, 1)",
        "self.net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))")
    result = sandbox.run(code)
    assert result.error is not None and "inplace" in result.error.message
    for found in diagnoses_for(sandbox, code, result):
        patch = found.patch or ""
        assert not (found.fix_verified and "-        self.optimizer.step()" in patch)

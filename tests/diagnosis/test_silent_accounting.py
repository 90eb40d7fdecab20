"""Silent bugs of parameter accounting, aliasing, gradients that cannot flow and what a loss
compares (tutor/diagnosis/accounting_checks.py, alias_checks.py, output_checks.py,
leaf_loss_checks.py, discarded_checks.py, and the trace checks they extend), each on small
programs of its own, written for the class rather than copied from the dev sets: the bug found
at its root line with a fix whose re-run shows the symptom gone, and the same program written
right given no such diagnosis."""

from __future__ import annotations

from typing import Any

import pytest

from tutor.diagnosis.reasoning import diagnose

from .runs import found_with_a_working_fix, not_diagnosed

DATA = """import copy
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
x = torch.randn(64, 6)
y = x[:, :1] * 2 - x[:, 1:2]
"""
TRAIN = """opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for _ in range(30):
    loss = F.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
"""

SCALES = """class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(6, 1)
        self.scales = {kind}
    def forward(self, t):
        for s in self.scales:
            t = t * s
        return self.body(t)
model = Scaled()
"""
HEADS = """class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Linear(6, 16)
        self.heads = {kind}
    def forward(self, t, task="a"):
        return self.heads[task](torch.relu(self.trunk(t)))
model = TwoHeads()
"""
STACKS = """class Stacks(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Linear(6, 6)
        self.down = {kind}
        self.down.append(nn.Linear(6, 16))
        self.up = {kind}
        self.up.append(nn.Linear(16, 1))
    def forward(self, t):
        return self.up[0](torch.relu(self.down[0](self.trunk(t))))
model = Stacks()
"""
MERGE = """class Merge(nn.Module):
    def __init__(self, layers):
        super().__init__()
        self._layers = {kind}
        for layer in layers:
            self._layers.append(layer)
    def forward(self, t):
        return torch.cat([layer(t) for layer in self._layers], dim=1)
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.merge = Merge([nn.Linear(6, 4), nn.Linear(6, 4)])
        self.out = nn.Linear(8, 1)
    def forward(self, t):
        return self.out(torch.relu(self.merge(t)))
model = Net()
"""
BUILT = """class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Linear(6, 16)
{init}
    def forward(self, t):
        h = torch.relu(self.trunk(t))
{forward}
model = Net()
"""
FROZEN = """model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))
{freeze}
opt = torch.optim.SGD(model.parameters(), lr=0.1)
before = model[0].weight.detach().clone()
for _ in range(5):
    loss = F.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
print(torch.equal(before, model[0].weight))
"""
EMA = """online = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))
target = {made}
opt = torch.optim.SGD(online.parameters(), lr=0.05)
def ema(tau=0.99):
    with torch.no_grad():
        for t, o in zip(target.parameters(), online.parameters()):
            t.mul_(tau).add_((1 - tau) * o)
for _ in range(10):
    goal = y + 0.5 * target(x).detach()
    loss = F.mse_loss(online(x), goal)
    opt.zero_grad()
    loss.backward()
    opt.step()
    ema()
"""
CRITIC = """class Agent:
    def __init__(self):
        self.critic = nn.Linear(6, 1)
        self.critic_target = nn.Linear(6, 1)
        self.opt = torch.optim.SGD(self.critic.parameters(), lr=0.1)
    def sync(self):
        self.critic_target.load_state_dict({source}.state_dict())
    def learn(self):
        goal = y + 0.9 * self.critic_target(x).detach()
        loss = F.mse_loss(self.critic(x), goal)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
agent = Agent()
for k in range(20):
    agent.learn()
    if k % 5 == 4:
        agent.sync()
"""
TEACHER = """student = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))
teacher = copy.deepcopy(student)
opt = torch.optim.SGD(student.parameters(), lr=0.05)
for _ in range(10):
    loss = F.mse_loss(student(x), y) + F.mse_loss(student(x), teacher(x).detach())
    opt.zero_grad()
    loss.backward()
    opt.step()
    with torch.no_grad():
        for tp, sp in zip(teacher.parameters(), student.parameters()):
            tp.data.copy_(0.9 * tp.data + 0.1 * {mixed}.data)
"""
OUTPUT = """model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1){last})
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for _ in range(40):
    loss = F.mse_loss(model(x), y * 3)
    opt.zero_grad()
    loss.backward()
    opt.step()
"""
GRADED = """scores = torch.rand(64, 1)
model = nn.Sequential(nn.Linear(6, 1), nn.Sigmoid())
def evaluate():
    with torch.no_grad():
        target = {cast}
        return F.mse_loss(model(x), target).item()
print(evaluate())
opt = torch.optim.SGD(model.parameters(), lr=0.5)
for _ in range(10):
    loss = F.mse_loss(model(x), scores)
    opt.zero_grad()
    loss.backward()
    opt.step()
"""
PRICES = """prices = 2e5 + 5e4 * x[:, :1]
{norm}model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for _ in range(60):
    loss = F.mse_loss(model(x), prices)
    opt.zero_grad()
    loss.backward()
    opt.step()
"""
LEAF = """model = nn.Linear(6, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(5):
    value = F.mse_loss(model(x), y){cut}
    loss = {rebuilt}
    opt.zero_grad()
    loss.backward()
    opt.step()
"""
# the cut inside the model's forward, the rebuild in the pre-0.4 spelling (corpus21's emoji
# classifier had both; no history is recorded for a loss rebuilt before backward())
LEAF_IN_FORWARD = """from torch.autograd import Variable


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 1)

    def forward(self, inputs):
        return self.fc(inputs){cut}


model = Net()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(5):
    loss = {rebuilt}
    opt.zero_grad()
    loss.backward()
    opt.step()
print(loss.item())
"""
TWO_LOSSES = """model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for _ in range(10):
    opt.zero_grad()
    F.mse_loss(model(x), y).backward()
{first}
    (model(x).abs().mean() * 0.1).backward()
{second}
"""
EDGES = """model = nn.Linear(6, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
edge = torch.zeros(64, dtype=torch.bool)
for _ in range(3):
    err = (model(x) - y).squeeze(1) ** 2
    loss = err.mean() + {edge_term}
    opt.zero_grad()
    loss.backward()
    opt.step()
"""
ONE_UNIT = """model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 1), {act})
labels = (x[:, :1] > 0).float()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for _ in range(20):
    loss = F.binary_cross_entropy(model(x), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
"""

# (id, root line, text the patch holds, program with the bug, the same program right)
CASES = [
    # parameters in a plain list, not a ParameterList
    ("params-in-plain-container", 12, "nn.ParameterList(",
     DATA + SCALES.format(kind="[nn.Parameter(torch.ones(6)) for _ in range(2)]") + TRAIN,
     DATA + SCALES.format(kind="nn.ParameterList([nn.Parameter(torch.ones(6)) "
                               "for _ in range(2)])") + TRAIN),
    # layers in a dict literal, not a ModuleDict
    ("params-in-plain-container", 12, "nn.ModuleDict(",
     DATA + HEADS.format(kind='{"a": nn.Linear(16, 1), "b": nn.Linear(16, 1)}') + TRAIN,
     DATA + HEADS.format(kind='nn.ModuleDict({"a": nn.Linear(16, 1), '
                              '"b": nn.Linear(16, 1)})') + TRAIN),
    # the dict written one layer to a line: wrapped where it opens and closes (corpus35
    # moduledict-plain-dict-heads-zh, after its scoring)
    ("params-in-plain-container", 12, "nn.ModuleDict({\n",
     DATA + HEADS.format(kind='{\n            "a": nn.Linear(16, 1),\n'
                              '            "b": nn.Linear(16, 1),\n        }') + TRAIN,
     DATA + HEADS.format(kind='nn.ModuleDict({\n            "a": nn.Linear(16, 1),\n'
                              '            "b": nn.Linear(16, 1),\n        })') + TRAIN),
    # two plain lists of layers (an encoder's and a decoder's, corpus6
    # encoder-layers-in-python-list-transformer): wrapping one alone trains half of them
    ("params-in-plain-container", 12, "self.up = nn.ModuleList()",
     DATA + STACKS.format(kind="[]") + TRAIN, DATA + STACKS.format(kind="nn.ModuleList()")
     + TRAIN),
    # a private plain list of a submodule, filled by append (corpus7
    # merge-layer-sublayers-in-python-list, after its scoring)
    ("params-in-plain-container", 11, "self._layers = nn.ModuleList()",
     DATA + MERGE.format(kind="[]") + TRAIN, DATA + MERGE.format(kind="nn.ModuleList()")
     + TRAIN),
    # a head whose input size comes from the forward pass: a Lazy layer built once
    ("layers-built-in-forward", 15, "nn.LazyLinear(1)",
     DATA + BUILT.format(init="", forward="        return nn.Linear(h.shape[1], 1)(h)")
     + TRAIN,
     DATA + BUILT.format(init="        self.head = nn.Linear(16, 1)",
                         forward="        return self.head(h)") + TRAIN),
    ("module-requires-grad-attr", 9, "model[0].requires_grad_(False)",
     DATA + FROZEN.format(freeze="model[0].requires_grad = False"),
     DATA + FROZEN.format(freeze="model[0].requires_grad_(False)")),
    ("requires-grad-typo", 10, "p.requires_grad = False",
     DATA + FROZEN.format(freeze="for p in model[0].parameters():\n    p.requires_grads = False"),
     DATA + FROZEN.format(freeze="for p in model[0].parameters():\n    p.requires_grad = False")),
    # an EMA target that is the online network itself
    ("target-net-aliased", 9, "copy.deepcopy(online)",
     DATA + EMA.format(made="online"), DATA + EMA.format(made="copy.deepcopy(online)")),
    ("target-copied-from-itself", 14, "self.critic.state_dict()",
     DATA + CRITIC.format(source="self.critic_target"),
     DATA + CRITIC.format(source="self.critic")),
    # a mean-teacher update that averages the teacher with itself
    ("target-mixed-with-itself", 18, "0.1 * sp.data",
     DATA + TEACHER.format(mixed="tp"), DATA + TEACHER.format(mixed="sp")),
    # a tanh output for targets well outside [-1, 1]
    ("output-range", 8, "nn.Linear(16, 1))",
     DATA + OUTPUT.format(last=", nn.Tanh()"), DATA + OUTPUT.format(last="")),
    # regression targets cast with .int() in an evaluation helper
    ("target-cast-to-long", 12, "scores.float()",
     DATA + GRADED.format(cast="scores.int()"), DATA + GRADED.format(cast="scores.float()")),
    ("unnormalized-target", 8, "prices.std()",
     DATA + PRICES.format(norm=""),
     DATA + PRICES.format(norm="prices = (prices - prices.mean()) / prices.std()\n")),
    ("loss-rebuilt-as-leaf", 11, "loss = value",
     DATA + LEAF.format(cut=".item()", rebuilt="torch.tensor(value, requires_grad=True)"),
     DATA + LEAF.format(cut="", rebuilt="value")),
    ("loss-rebuilt-as-leaf", 17, "return self.fc(inputs)\n",
     DATA + LEAF_IN_FORWARD.format(
         cut=".data", rebuilt="Variable(F.mse_loss(model(x), y), requires_grad=True)"),
     DATA + LEAF_IN_FORWARD.format(cut="", rebuilt="F.mse_loss(model(x), y)")),
    ("gradients-discarded", 13, "opt.step()",
     DATA + TWO_LOSSES.format(first="    opt.step()", second=""),
     DATA + TWO_LOSSES.format(first="", second="    opt.step()")),
    ("nan-from-op", 13, "err[edge].sum() / max(err[edge].numel(), 1)",
     DATA + EDGES.format(edge_term="err[edge].mean()"),
     DATA + EDGES.format(edge_term="err[edge].sum() / max(err[edge].numel(), 1)")),
    ("softmax-wrong-dim", 8, "nn.Sigmoid()",
     DATA + ONE_UNIT.format(act="nn.Softmax(dim=1)"), DATA + ONE_UNIT.format(act="nn.Sigmoid()")),
]
IDS = [f"{c[0]}-{i}" for i, c in enumerate(CASES)]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_found_at_its_root_with_a_working_fix_and_not_in_the_program_written_right(
        sandbox: Any, case: tuple[str, int, str, str, str]) -> None:
    expected, root, fix_has, code, right = case
    found_with_a_working_fix(sandbox, expected, root, fix_has, code)
    not_diagnosed(sandbox, expected, right)


# Programs written right that look like the bugs above: none of these diagnoses for them.
LOOKALIKES = {
    # one encoder shared by two branches on purpose (siamese): two names, both trained
    "siamese": DATA + """class Siamese(nn.Module):
    def __init__(self, encoder):
        super().__init__()
        self.left = encoder
        self.right = encoder
    def forward(self, a, b):
        return (self.left(a) - self.right(b)).pow(2).sum(1, keepdim=True)
model = Siamese(nn.Linear(6, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for _ in range(10):
    loss = F.mse_loss(model(x, x.flip(0)), y.abs())
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
    # a head built lazily at the first call, the optimizer built after it
    "lazy-head": DATA + """class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Linear(6, 16)
        self.head = None
    def forward(self, t):
        h = torch.relu(self.trunk(t))
        if self.head is None:
            self.head = nn.Linear(h.shape[1], 1)
        return self.head(h)
model = Net()
model(x)
""" + TRAIN,
    # a sigmoid output for targets in [0, 1], a ReLU output for counts (never negative)
    "bounded-targets": DATA + """probs = torch.sigmoid(x[:, :1])
counts = (x[:, :1] * 3).abs().round()
a = nn.Sequential(nn.Linear(6, 1), nn.Sigmoid())
b = nn.Sequential(nn.Linear(6, 1), nn.ReLU())
opt = torch.optim.Adam([*a.parameters(), *b.parameters()], lr=1e-2)
for _ in range(20):
    loss = F.mse_loss(a(x), probs) + F.mse_loss(b(x), counts)
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
    # class labels cast from whole-number floats; a target network copied, then kept apart
    "labels-and-targets": DATA + """labels = (x[:, 0] > 0).float().long()
net = nn.Linear(6, 2)
target = nn.Linear(6, 2)
target.load_state_dict(net.state_dict())
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for _ in range(10):
    loss = F.cross_entropy(net(x), labels) + F.mse_loss(net(x), target(x).detach())
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
    # a GAN: the generator's pass also writes the discriminator's gradients, which the next
    # zero_grad() clears; the generator's step used that pass
    "gan": DATA + """g = nn.Linear(4, 6)
d = nn.Sequential(nn.Linear(6, 1), nn.Sigmoid())
opt_g = torch.optim.SGD(g.parameters(), lr=0.05)
opt_d = torch.optim.SGD(d.parameters(), lr=0.05)
for _ in range(10):
    fake = g(torch.randn(64, 4))
    opt_d.zero_grad()
    d_loss = F.binary_cross_entropy(d(x), torch.ones(64, 1)) + F.binary_cross_entropy(
        d(fake.detach()), torch.zeros(64, 1))
    d_loss.backward()
    opt_d.step()
    opt_g.zero_grad()
    g_loss = F.binary_cross_entropy(d(fake), torch.ones(64, 1))
    g_loss.backward()
    opt_g.step()
""",
    # weights clipped in place each step (a WGAN critic): a copy from itself, meant
    "clipped": DATA + """critic = nn.Linear(6, 1)
opt = torch.optim.RMSprop(critic.parameters(), lr=1e-3)
for _ in range(10):
    loss = -critic(x).mean() + critic(x.flip(0) * 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    with torch.no_grad():
        for p in critic.parameters():
            p.copy_(p.clamp(-0.01, 0.01))
""",
    # a frozen backbone (the flag on its parameters) and a loss logged with .item()
    "frozen-and-logged": DATA + """backbone = nn.Linear(6, 16)
backbone.requires_grad_(False)
head = nn.Linear(16, 1)
opt = torch.optim.SGD(head.parameters(), lr=0.1)
history = []
for _ in range(10):
    loss = F.mse_loss(head(torch.relu(backbone(x))), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    history.append(loss.item())
""",
}
SILENT_IDS = {"params-in-plain-container", "layers-built-in-forward", "module-requires-grad-attr",
              "requires-grad-typo", "target-net-aliased", "target-copied-from-itself",
              "output-range", "relu-output", "target-cast-to-long", "unnormalized-target",
              "loss-rebuilt-as-leaf", "gradients-discarded", "optimizer-wrong-params",
              "target-mixed-with-itself"}


@pytest.mark.parametrize("name", sorted(LOOKALIKES))
def test_programs_written_right_that_look_like_these_bugs_get_none_of_them(
        sandbox: Any, name: str) -> None:
    code = LOOKALIKES[name]
    result = sandbox.run(code)
    assert result.ok, result.error
    assert not {d.id for d in diagnose(code, result, sandbox)} & SILENT_IDS


def _solutions() -> list[tuple[str, str]]:
    from tutor.course import loader

    return [(f"{lesson.id}/{step.id}", step.solution) for lesson in loader.load_course().lessons
            for step in lesson.steps if getattr(step, "solution", None)]


@pytest.mark.parametrize(("step", "code"), _solutions(), ids=[s for s, _ in _solutions()])
def test_the_course_reference_solutions_get_none_of_them(
        sandbox: Any, step: str, code: str) -> None:
    result = sandbox.run(code)
    found = {d.id for d in diagnose(code, result, sandbox)} if result.outcome in (
        "ok", "error") else set()
    assert not found & (SILENT_IDS - {"optimizer-wrong-params"}), (step, found)

"""The silent-bug checks, on small programs of their own: what the re-run saw (gradients
adding up, parameters that never change, a loss that is not a loss) decides, and the fix
shown made the symptom go away in the sandbox."""

from __future__ import annotations

from typing import Any

import pytest

from tutor.diagnosis.reasoning import diagnose

from .runs import found_with_a_working_fix, not_diagnosed, verified_diagnosis

DATA = """import torch
import torch.nn as nn
torch.manual_seed(3)
x = torch.randn(40, 4)
y = (x[:, :1] - 2 * x[:, 1:2])
"""

FIX_DATA = """import torch
import torch.nn as nn
torch.manual_seed(0)
x = torch.randn(32, 4)
y = x @ torch.tensor([[1.0], [-1.0], [2.0], [0.5]])
"""

CASES = [
    # no zero_grad in a loop written as a method: gradients add up at every pass, even
    # where the loss still falls (it does here: the evidence is the gradients, not the loss)
    ("missing-zero-grad", 11, "zero_grad()", DATA + """class Trainer:
    def __init__(self):
        self.net = nn.Linear(4, 1)
        self.opt = torch.optim.SGD(self.net.parameters(), lr=0.02)
    def fit(self, steps):
        for _ in range(steps):
            loss = ((self.net(x) - y) ** 2).mean()
            loss.backward()
            self.opt.step()

Trainer().fit(25)
"""),
    # softmax fed to NLLLoss: the "loss" is a negative probability, not a log-likelihood
    ("softmax-before-nll", 11, "log_softmax", DATA + """labels = (y[:, 0] > 0).long()
net = nn.Linear(4, 2)
opt = torch.optim.Adam(net.parameters(), lr=0.05)
for _ in range(30):
    opt.zero_grad()
    p = net(x).softmax(dim=1)
    nn.NLLLoss()(p, labels).backward()
    opt.step()
"""),
    # a Softmax layer kept as an attribute before NLLLoss, in a short training whose fixed
    # loss falls less than 10%: the negative "loss" before the change already showed it
    # was none, so the fix need only make a proper loss that falls
    ("softmax-before-nll", 13, "nn.LogSoftmax(dim=1)", DATA + """labels = (y[:, 0] > 0).long()


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.softmax = nn.Softmax(dim=1)

    def forward(self, t):
        return self.softmax(self.fc(t))

    def fit(self, opt, criterion):
        for _ in range(5):
            opt.zero_grad()
            loss = criterion(self(x), labels)
            loss.backward()
            opt.step()
            print(loss.item())


net = Net()
net.fit(torch.optim.SGD(net.parameters(), lr=0.05), nn.NLLLoss())
"""),
    # a Sigmoid layer written on one line with the Linear before it, in a Sequential of
    # several lines, before BCEWithLogitsLoss: that line without it is the change tried
    ("double-sigmoid", 9, "nn.Linear(8, 1),\n", DATA + """labels = (y > 0).float()
net = nn.Sequential(
    nn.Linear(4, 8), nn.Tanh(),
    nn.Linear(8, 1), nn.Sigmoid(),
)
opt = torch.optim.Adam(net.parameters(), lr=0.05)
for _ in range(40):
    opt.zero_grad()
    loss = nn.BCEWithLogitsLoss()(net(x), labels)
    loss.backward()
    opt.step()
print(loss.item())
"""),
    # a param group left out of the optimizer
    ("optimizer-wrong-params", 16, "model.parameters()", DATA + """class Two(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 8)
        self.head = nn.Linear(8, 1)
    def forward(self, t):
        return self.head(torch.relu(self.body(t)))

model = Two()
opt = torch.optim.SGD(
    [{"params": model.body.parameters(), "lr": 0.05}],
    lr=0.05)
for _ in range(20):
    opt.zero_grad()
    ((model(x) - y) ** 2).mean().backward()
    opt.step()
"""),
    # the tensor handed to the optimizer is replaced afterwards
    ("optimizer-wrong-params", 9, "opt = torch.optim", DATA + """def fit():
    w = torch.zeros(4, 1, requires_grad=True)
    opt = torch.optim.SGD([w], lr=0.1)
    w = torch.randn(4, 1, requires_grad=True)
    for _ in range(20):
        opt.zero_grad()
        ((x @ w - y) ** 2).mean().backward()
        opt.step()
    return w

fit()
"""),
    # a helper gives the model new layers (setattr on its parameter) after the optimizer
    # took the old ones: the optimizer is built after the helper's call
    ("optimizer-wrong-params", 16, "+widen(net, 8)", DATA + """def widen(net, width):
    for name in ("inp", "out"):
        old = getattr(net, name)
        new = nn.Linear(old.in_features if name == "inp" else width,
                        width if name == "inp" else old.out_features)
        setattr(net, name, new)

net = nn.Module()
net.inp, net.out = nn.Linear(4, 2), nn.Linear(2, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.05)
widen(net, 8)
for _ in range(20):
    opt.zero_grad()
    ((net.out(torch.relu(net.inp(x))) - y) ** 2).mean().backward()
    opt.step()
"""),
    # a weight used through .data: backward reaches it (another term uses it) but with a
    # zero gradient, so it never changes
    ("graph-cut-silent", 11, "x @ w)", DATA + """w = torch.zeros(4, 1, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
opt = torch.optim.SGD([w, b], lr=0.1)
for _ in range(20):
    opt.zero_grad()
    pred = (x @ w.data) + b
    loss = ((pred - y) ** 2).mean() + 0.0 * w.sum()
    loss.backward()
    opt.step()
"""),
    # a loss rebuilt with torch.tensor from terms that require grad: its value counts, its
    # gradient is lost (the rest of the loss still has a graph, so nothing fails); named as
    # the term of the summed loss that lost its graph, where the cut happened
    ("loss-term-without-gradient", 9, "torch.stack(terms)",
     DATA + """w = torch.zeros(4, 1, requires_grad=True)
def penalty(parts):
    terms = [p.abs().sum() for p in parts]
    return torch.tensor(terms).sum()
opt = torch.optim.SGD([w], lr=0.05)
for _ in range(10):
    opt.zero_grad()
    loss = ((x @ w - y) ** 2).mean() + 0.1 * penalty([w])
    loss.backward()
    opt.step()
"""),
    # zero_grad() of another module: the optimizer's gradients add up (not the learning
    # rate: lowering it also helps, but the gradients say why)
    ('missing-zero-grad', 10, 'opt.zero_grad()', FIX_DATA + """model = nn.Linear(4, 1)
other = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for _ in range(30):
    other.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
print(loss.item())
"""),
    # a Sigmoid layer at the end of a Sequential fed to BCEWithLogitsLoss
    ('double-sigmoid', 7, 'nn.Linear(8, 1))', FIX_DATA + """labels = (y > 0).float()
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1), nn.Sigmoid())
crit = nn.BCEWithLogitsLoss()
opt = torch.optim.SGD(model.parameters(), lr=0.5)
for _ in range(40):
    opt.zero_grad()
    crit(model(x), labels).backward()
    opt.step()
"""),
    # model.requires_grad_(False) freezes the layer the optimizer was given
    ('frozen-params', 7, '', FIX_DATA + """model = nn.Linear(4, 1)
model.requires_grad_(False)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
bias = torch.zeros(1, requires_grad=True)
opt.add_param_group({"params": [bias]})
for _ in range(20):
    opt.zero_grad()
    ((model(x) + bias - y) ** 2).mean().backward()
    opt.step()
print(model.weight)
"""),
]


@pytest.mark.parametrize(("expected", "root", "fix_has", "code"), CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_silent_check_names_the_root_line_and_a_verified_fix(
        sandbox: Any, expected: str, root: int, fix_has: str, code: str) -> None:
    assert sandbox.run(code).ok
    verified_diagnosis(sandbox, code, {expected}, root, fix_has)


def test_gradients_cleared_in_a_helper_are_not_a_missing_zero_grad(sandbox: Any) -> None:
    # the loop has no zero_grad() in it, but a function it calls clears the gradients: the
    # re-run sees none adding up, so the static shape alone does not make a diagnosis
    code = DATA + """net = nn.Linear(4, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.05)

def clear(module):
    for p in module.parameters():
        p.grad = None

for _ in range(20):
    clear(net)
    ((net(x) - y) ** 2).mean().backward()
    opt.step()
"""
    found = diagnose(code, sandbox.run(code), sandbox)
    assert "missing-zero-grad" not in {d.id for d in found}


LR_LOOP = FIX_DATA + """x = x * 10
y = x @ torch.tensor([[1.0], [-1.0], [2.0], [0.5]])
model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for _ in range(20):
    opt.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
{clip_before}    loss.backward()
    opt.step()
"""


def test_a_diverging_loss_that_a_smaller_rate_settles_is_the_learning_rate(
        sandbox: Any) -> None:
    code = LR_LOOP.format(clip_before="")
    first = verified_diagnosis(sandbox, code, {"lr-too-high"}, 9, "lr=0.0005")
    assert not first.generic
    assert "?" not in first.title.en + first.explanation.en  # the loss it saw, in words


def test_a_diverging_loss_with_something_else_setting_the_step_is_not_the_rate(
        sandbox: Any) -> None:
    # the gradient clipping runs before backward() and clips nothing: a smaller rate helps
    # too, but it is not the cause; the clip out of its place is (clip_checks.py: it was
    # the honest generic diagnosis before that check)
    code = LR_LOOP.format(
        clip_before="    nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n")
    first = verified_diagnosis(sandbox, code, {"clip-order"}, 13, "clip_grad_norm_")
    assert "lr-too-high" not in {first.id, *first.alternatives[:1]}


def test_a_layer_frozen_on_purpose_while_the_rest_learns_is_not_a_bug(sandbox: Any) -> None:
    # the first layer is frozen (fine-tuning the rest): the loss falls and nothing looks at
    # the frozen layer, so unfreezing it "works" but is no diagnosis
    code = FIX_DATA + """model = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))
for p in model[0].parameters():
    p.requires_grad_(False)
opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.05)
for _ in range(30):
    opt.zero_grad()
    ((model(x) - y) ** 2).mean().backward()
    opt.step()
"""
    found = diagnose(code, sandbox.run(code), sandbox)
    assert "frozen-params" not in {d.id for d in found}


TRIED_AND_FAILED = """import torch
import torch.nn as nn
conv = nn.Conv2d(1, 1, 3, bias=False)
conv.weight.data = torch.ones(1, 1, 3, 3) / 9
out = conv(torch.rand(1, 3, 8, 8))
"""
"""The layer is built for 1 channel and the image has 3, but its weight is then set by hand
for 1 channel: rebuilding the layer for 3 still fails."""


def test_a_fix_that_was_tried_and_failed_is_told_as_evidence(sandbox: Any) -> None:
    # the diagnosis says the rebuilt layer was tried and did not work (evidence), and
    # nothing is marked verified
    first = diagnose(TRIED_AND_FAILED, sandbox.run(TRIED_AND_FAILED), sandbox)[0]
    assert first.fix_verified is False
    assert first.chain[-1].en.startswith("tried in a re-run: ")
    assert "still did not work" in first.chain[-1].en and first.chain[-1].zh
    assert first.fix_failed


def test_the_faces_say_a_failed_fix_was_tried(sandbox: Any) -> None:
    # they said "this fix could not be checked" under a chain that said it was tried
    from tutor.cli.diagnosis_view import format_diagnosis
    from tutor.tui.root_cause import evidence_markdown

    first = diagnose(TRIED_AND_FAILED, sandbox.run(TRIED_AND_FAILED), sandbox)[0]
    for lang, tried, untried in (("en", "was tried on your program", "could not be checked"),
                                 ("zh", "已在你的程序上试过", "无法通过重新运行")):
        for text in (format_diagnosis(first, lang), evidence_markdown(first, lang)):
            assert tried in text and untried not in text


def test_a_train_call_just_before_predicting_is_the_root_and_its_words_keep_the_contract(
        sandbox: Any) -> None:
    # validate() switches to eval and straight back to train before the forward pass: the
    # fix deletes that call, and its words do not quote the learner's own line as the fix
    from tutor.diagnosis.contract import violations

    layers = "nn.Linear(4, 16), nn.ReLU(), nn.Dropout(0.5), nn.Linear(16, 1)"
    code = FIX_DATA + f"model = nn.Sequential({layers})\n" + """def validate(model):
    model.eval()
    with torch.no_grad():
        model.train()
        return ((model(x) - y) ** 2).mean().item()
print(validate(model), validate(model))
"""
    first = verified_diagnosis(sandbox, code, {"dropout-no-eval"}, 10, "-        model.train()")
    assert violations(first, code) == []


# an encoder given to its own optimizer but run only under no_grad (corpus14's
# cic-encoder-features-under-no-grad, after its scoring): its parameters never learn
ENCODER = """import torch
import torch.nn as nn
torch.manual_seed(0)
encoder = nn.Linear(8, 4)
head = nn.Linear(4, 2)
enc_opt = torch.optim.Adam(encoder.parameters(), lr=1e-2)
head_opt = torch.optim.Adam(head.parameters(), lr=1e-2)
x, y = torch.randn(32, 8), torch.randint(0, 2, (32,))
for _ in range(10):
{encode}
    loss = nn.functional.cross_entropy(head(features), y)
    enc_opt.zero_grad()
    head_opt.zero_grad()
    loss.backward()
    enc_opt.step()
    head_opt.step()
"""
UNDER_NO_GRAD = "    with torch.no_grad():\n        features = encoder(x)"
# a target computed under no_grad by a network that also runs with gradients (DQN)
TARGET = """import torch
import torch.nn as nn
torch.manual_seed(0)
q = nn.Linear(4, 2)
opt = torch.optim.SGD(q.parameters(), lr=0.1)
s, s2, r = torch.randn(16, 4), torch.randn(16, 4), torch.randn(16)
for _ in range(5):
    with torch.no_grad():
        target = r + 0.9 * q(s2).max(dim=1).values
    loss = ((q(s).max(dim=1).values - target) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


def test_a_trained_module_run_only_under_no_grad_is_found_at_the_block(sandbox: Any) -> None:
    code = ENCODER.format(encode=UNDER_NO_GRAD)
    found_with_a_working_fix(sandbox, "graph-cut-silent", 11, "features = encoder(x)", code)
    not_diagnosed(sandbox, "graph-cut-silent", ENCODER.format(encode="    features = encoder(x)"))


def test_no_grad_around_a_target_of_a_network_that_also_trains_is_meant(sandbox: Any) -> None:
    not_diagnosed(sandbox, "graph-cut-silent", TARGET)


# param groups assembled by hand from each module's weight and bias miss a standalone
# nn.Parameter of a fusion module (corpus7 bifpn-fusion-weights-left-out-of-param-groups-zh):
# the parameters it misses are added as a group of their own, and tried
GROUPS = """import torch
import torch.nn as nn
torch.manual_seed(0)

class Fuse(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(2))
        self.proj = nn.Linear(4, 1)

    def forward(self, a, b):
        w = torch.relu(self.w)
        return self.proj(w[0] * a + w[1] * b)

def build_optimizer(model):
    weights, biases = [], []
    for m in model.modules():
        if isinstance(m, nn.Linear):
            weights.append(m.weight)
            biases.append(m.bias)
    opt = torch.optim.SGD(weights, lr=0.1)
    opt.add_param_group({"params": biases})
    return opt

model = Fuse()
opt = build_optimizer(model)
a, b, y = torch.randn(16, 4), torch.randn(16, 4), torch.randn(16, 1)
for _ in range(20):
    loss = ((model(a, b) - y) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


def test_a_parameter_left_out_of_hand_made_param_groups_is_added_as_a_group(
        sandbox: Any) -> None:
    found_with_a_working_fix(sandbox, "optimizer-wrong-params", 21,
                             'opt.add_param_group({"params": [model.w]})',
                             GROUPS)


# one method runs both phases and calls train() first (corpus15
# pose-trainer-validates-in-train-mode, after its scoring): deleting that train() makes
# predictions in eval mode, and makes every later epoch train in eval mode; a change whose run
# shows a mistake the program did not have is refused, and eval() before predicting is kept
PHASES = """import torch
import torch.nn as nn
import torch.nn.functional as F

class Trainer:
    def __init__(self, model):
        self.model = model
        self.opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    def run_phase(self, phase, x, y):
        self.model.train()
        if phase == "train":
            loss = F.mse_loss(self.model(x), y)
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
        else:
            with torch.no_grad():
                loss = F.mse_loss(self.model(x), y)
        return loss.item()

model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 1))
trainer = Trainer(model)
x, y = torch.randn(16, 4), torch.randn(16, 1)
for epoch in range(3):
    for _ in range(5):
        trainer.run_phase("train", x, y)
    for _ in range(5):
        trainer.run_phase("valid", x * 2 + 3, y)
    print(epoch, model[1].running_var.mean().item())
"""


def test_a_fix_whose_run_trains_in_eval_mode_is_refused(sandbox: Any) -> None:
    first = diagnose(PHASES, sandbox.run(PHASES), sandbox)[0]
    assert first.id == "batchnorm-no-eval" and first.fix_verified, (first.id, first.fix.en)
    assert "self.model.eval()" in (first.patch or "")
    assert "-        self.model.train()" not in (first.patch or "")


# validation inside the epoch loop with no eval() at all (corpus3
# validation-with-dropout-no-eval-udacity): eval() alone would leave the next epochs training
# in eval mode, and that change is refused; eval() before and train() after is given
EPOCHS = """import torch
import torch.nn as nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Dropout(0.5), nn.Linear(16, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(32, 4), torch.randint(0, 2, (32,))
for epoch in range(3):
    opt.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
    with torch.no_grad():
        a = model(x).sum().item()
        b = model(x).sum().item()
    print(epoch, a, b)
"""


def test_validation_each_epoch_gets_eval_before_and_train_after(sandbox: Any) -> None:
    first = diagnose(EPOCHS, sandbox.run(EPOCHS), sandbox)[0]
    assert first.id == "dropout-no-eval" and first.fix_verified, (first.id, first.fix.en)
    assert "+    model.eval()" in (first.patch or "") and "model.train()" in (first.patch or "")


# Two critics, and the critics' optimizer given the first one's parameters twice (torch warns
# of duplicate parameters): the second critic's gradients are computed and never applied.
# The second listing is the mistake, not the generator's optimizer, which in a GAN holds the
# generator alone (corpus32's gan-discriminator-optimizer-lists-one-discriminator-twice had
# the generator's optimizer given every parameter).
TWO_CRITICS = """import torch
import torch.nn as nn
torch.manual_seed(0)


class Pair(nn.Module):
    def __init__(self):
        super().__init__()
        self.gen = nn.Linear(4, 4)
        self.critic_a = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
        self.critic_b = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))

    def optimizers(self):
        critics = [*self.critic_a.parameters(), *self.critic_a.parameters()]
        gen_opt = torch.optim.SGD(self.gen.parameters(), lr=0.05)
        critic_opt = torch.optim.SGD(critics, lr=0.05)
        return gen_opt, critic_opt


pair = Pair()
opt_g, opt_c = pair.optimizers()
for step in range(30):
    real, fake = torch.randn(16, 4) + 2, pair.gen(torch.randn(16, 4))
    c_loss = sum((c(fake.detach()) - c(real)).mean() for c in (pair.critic_a, pair.critic_b))
    opt_c.zero_grad()
    c_loss.backward()
    opt_c.step()
    g_loss = sum(-c(fake).mean() for c in (pair.critic_a, pair.critic_b))
    opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()
print(c_loss.item(), g_loss.item())
"""


def test_a_module_listed_twice_in_an_optimizer_is_where_the_left_out_one_was_meant(
        sandbox: Any) -> None:
    from tutor.diagnosis.reasoning import diagnose

    result = sandbox.run(TWO_CRITICS)
    assert result.ok and any("duplicate parameters" in w.message for w in result.warnings)
    first = diagnose(TWO_CRITICS, result, sandbox)[0]
    assert (first.id, first.root_line, first.fix_verified) == ("optimizer-wrong-params", 14,
                                                               True)
    assert first.patch is not None and "*self.critic_b.parameters()]" in first.patch
    chain = " ".join(step.en for step in first.chain)
    assert "`self.critic_a` a second time" in chain and "`self.critic_b`" in chain
    assert all(step.zh for step in first.chain)

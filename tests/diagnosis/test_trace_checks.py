"""The silent-bug checks over the training trace (tutor/diagnosis/trace_checks.py), each on
small programs of its own: the bug found at its root line with a fix whose re-run shows the
symptom gone, and the same program written right given no such diagnosis."""

from __future__ import annotations

from typing import Any

import pytest

from .runs import found_with_a_working_fix, not_diagnosed

DATA = """import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
x = torch.randn(64, 4)
y = (x[:, 0] + x[:, 1] > 0).long()
"""

DROPPED = "model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Dropout(0.5), nn.Linear(16, 2))\n"
TWO_LAYERS = "model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))\n"
NORMED = "model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 2))\n"
SIGMOID_NET = "model = nn.Sequential(nn.Linear(4, 6), nn.Sigmoid(), nn.Linear(6, 2))\n"

ATTEND = """class Attend(nn.Module):
    def __init__(self, p=0.3):
        super().__init__()
        self.p = p
        self.proj = nn.Linear(4, 12)
    def forward(self, t):
        q, k, v = self.proj(t).view(1, -1, 3, 4).unbind(2)
        return F.scaled_dot_product_attention(q, k, v, dropout_p={rate})
net = Attend()
net.eval()
with torch.no_grad():
    print((net(x) - net(x)).abs().max())
"""

# (id, root line, text the patch holds, program with the bug, the same program right)
CASES = [
    ("nan-from-op", 11, "clamp(min=1e-8)", DATA + """w = torch.randn(4, requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1)
for _ in range(3):
    p = torch.sigmoid(x @ w * 300)
    loss = -(y * torch.log(p) + (1 - y) * torch.log(1 - p)).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
""", DATA + """w = torch.randn(4, requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1)
for _ in range(3):
    loss = F.binary_cross_entropy_with_logits(x @ w * 300, y.float())
    opt.zero_grad()
    loss.backward()
    opt.step()
"""),
    # the forward is finite, the gradient of a square root at 0 is not
    ("nan-from-op", 10, "clamp(min=1e-8)", DATA + """net = nn.Linear(4, 3)
opt = torch.optim.Adam(net.parameters(), lr=0.01)
def spread(t):
    return torch.sqrt(((t - t.mean(0)) ** 2).sum(1) * (y > 0)).mean()
for _ in range(3):
    opt.zero_grad()
    spread(net(x)).backward()
    opt.step()
""", DATA + """net = nn.Linear(4, 3)
opt = torch.optim.Adam(net.parameters(), lr=0.01)
def spread(t):
    return torch.sqrt(((t - t.mean(0)) ** 2).sum(1) * (y > 0) + 1e-8).mean()
for _ in range(3):
    opt.zero_grad()
    spread(net(x)).backward()
    opt.step()
"""),
    # a sigmoid inside a helper, its output given to the logits loss
    ("double-sigmoid", 10, "(logits,", DATA + """net = nn.Linear(4, 1)
opt = torch.optim.Adam(net.parameters(), lr=0.05)
def loss_of(logits, target):
    probs = torch.sigmoid(logits)
    return F.binary_cross_entropy_with_logits(probs, target)
for _ in range(60):
    opt.zero_grad()
    loss_of(net(x).squeeze(1), y.float()).backward()
    opt.step()
""", DATA + """net = nn.Linear(4, 1)
opt = torch.optim.Adam(net.parameters(), lr=0.05)
def loss_of(logits, target):
    return F.binary_cross_entropy_with_logits(logits, target)
for _ in range(60):
    opt.zero_grad()
    loss_of(net(x).squeeze(1), y.float()).backward()
    opt.step()
"""),
    # NLLLoss on raw scores: the loss goes negative without bound
    ("nll-without-log-softmax", 8, "CrossEntropyLoss()", DATA + """net = nn.Linear(4, 2)
criterion = nn.NLLLoss()
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for _ in range(20):
    opt.zero_grad()
    criterion(net(x), y).backward()
    opt.step()
""", DATA + """net = nn.Linear(4, 2)
criterion = nn.NLLLoss()
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for _ in range(20):
    opt.zero_grad()
    criterion(torch.log_softmax(net(x), dim=1), y).backward()
    opt.step()
"""),
    # validation switches to eval mode and training goes on in it
    ("train-mode-not-restored", 10, "model.train()",
     DATA + DROPPED + """opt = torch.optim.SGD(model.parameters(), lr=0.1)
def validate():
    model.eval()
    with torch.no_grad():
        return F.cross_entropy(model(x), y).item()
for epoch in range(6):
    opt.zero_grad()
    F.cross_entropy(model(x), y).backward()
    opt.step()
    validate()
""", DATA + DROPPED + """opt = torch.optim.SGD(model.parameters(), lr=0.1)
def validate():
    model.eval()
    with torch.no_grad():
        return F.cross_entropy(model(x), y).item()
for epoch in range(6):
    model.train()
    opt.zero_grad()
    F.cross_entropy(model(x), y).backward()
    opt.step()
    validate()
"""),
    # attention dropout has no training flag: its rate is the module's mode's to choose
    ("attention-dropout-in-eval", 14, "dropout_p=self.p if self.training else 0.0",
     DATA + ATTEND.format(rate="self.p"),
     DATA + ATTEND.format(rate="self.p if self.training else 0.0")),
    ("dropout-training-flag", 12, "training=self.training", DATA + """class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
    def forward(self, t):
        return F.dropout(self.fc(t), p=0.3)
net = Net()
net.eval()
with torch.no_grad():
    print(net(x)[:2])
""", DATA + """class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
    def forward(self, t):
        return F.dropout(self.fc(t), p=0.3, training=self.training)
net = Net()
net.eval()
with torch.no_grad():
    print(net(x)[:2])
"""),
    ("shared-batchnorm", 16, "self.bn2", DATA + """class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.bn1 = nn.BatchNorm1d(8)
        self.fc2 = nn.Linear(8, 8)
        self.out = nn.Linear(8, 2)
    def forward(self, t):
        t = torch.relu(self.bn1(self.fc1(t)))
        t = torch.relu(self.bn1(self.fc2(t)))
        return self.out(t)
net = Net()
opt = torch.optim.Adam(net.parameters(), lr=0.01)
for _ in range(5):
    opt.zero_grad()
    F.cross_entropy(net(x), y).backward()
    opt.step()
""", DATA + """class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.bn1 = nn.BatchNorm1d(8)
        self.fc2 = nn.Linear(8, 8)
        self.out = nn.Linear(8, 2)
    def forward(self, t, u):
        return self.out(torch.relu(self.bn1(self.fc1(t))) - torch.relu(self.bn1(self.fc1(u))))
net = Net()
opt = torch.optim.Adam(net.parameters(), lr=0.01)
for _ in range(5):
    opt.zero_grad()
    F.cross_entropy(net(x, x.flip(0)), y).backward()
    opt.step()
"""),
    ("inplace-overwrites-input", 10, "nn.ReLU()", DATA + """class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.ReLU(inplace=True), nn.Linear(4, 4))
    def forward(self, t):
        return self.body(t) + t
block = Block()
features = x.clone()
print((block(features) - x).abs().max())
""", DATA + """class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.ReLU(), nn.Linear(4, 4))
    def forward(self, t):
        return self.body(t) + t
block = Block()
features = x.clone()
print((block(features) - x).abs().max())
"""),
    ("zero-grad-erases-accumulation", 10, "-    opt.zero_grad()", DATA + """net = nn.Linear(4, 2)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for i, chunk in enumerate(x.chunk(8)):
    opt.zero_grad()
    F.cross_entropy(net(chunk), y[i * 8:(i + 1) * 8]).backward()
    if i % 4 == 3:
        opt.step()
        opt.zero_grad()
""", DATA + """net = nn.Linear(4, 2)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for i, chunk in enumerate(x.chunk(8)):
    F.cross_entropy(net(chunk), y[i * 8:(i + 1) * 8]).backward()
    if i % 4 == 3:
        opt.step()
        opt.zero_grad()
"""),
    ("lr-too-low", 8, "lr=", DATA + """net = nn.Linear(4, 2)
opt = torch.optim.SGD(net.parameters(), lr=1e-6)
for _ in range(30):
    opt.zero_grad()
    F.cross_entropy(net(x), y).backward()
    opt.step()
""", DATA + """net = nn.Linear(4, 2)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for _ in range(30):
    opt.zero_grad()
    F.cross_entropy(net(x), y).backward()
    opt.step()
"""),
    ("freeze-undone", 12, "-    p.requires_grad = True",
     DATA + TWO_LAYERS + """for p in model[0].parameters():
    p.requires_grad = False
groups = []
for p in model.parameters():
    p.requires_grad = True
    groups.append(p)
opt = torch.optim.SGD(groups, lr=0.1)
for _ in range(5):
    opt.zero_grad()
    F.cross_entropy(model(x), y).backward()
    opt.step()
""", DATA + TWO_LAYERS + """for p in model[0].parameters():
    p.requires_grad = False
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(5):
    if epoch == 3:
        for p in model.parameters():
            p.requires_grad = True
    opt.zero_grad()
    F.cross_entropy(model(x), y).backward()
    opt.step()
"""),
    ("symmetric-init", 9, "-    nn.init.zeros_(layer.weight)",
     DATA + SIGMOID_NET + """for layer in (model[0], model[2]):
    nn.init.zeros_(layer.weight)
    nn.init.zeros_(layer.bias)
opt = torch.optim.SGD(model.parameters(), lr=0.5)
for _ in range(20):
    opt.zero_grad()
    F.cross_entropy(model(x), y).backward()
    opt.step()
""", DATA + SIGMOID_NET + """nn.init.zeros_(model[2].weight)
nn.init.zeros_(model[2].bias)
opt = torch.optim.SGD(model.parameters(), lr=0.5)
for _ in range(20):
    opt.zero_grad()
    F.cross_entropy(model(x), y).backward()
    opt.step()
"""),
    ("params-not-registered", 11, "nn.Parameter(torch.ones(4))", DATA + """class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.gain = torch.ones(4, requires_grad=True)
    def forward(self, t):
        return self.fc(t * self.gain)
model = Scaled()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(5):
    opt.zero_grad()
    F.cross_entropy(model(x), y).backward()
    opt.step()
""", DATA + """class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.gain = nn.Parameter(torch.ones(4))
    def forward(self, t):
        return self.fc(t * self.gain)
model = Scaled()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(5):
    opt.zero_grad()
    F.cross_entropy(model(x), y).backward()
    opt.step()
"""),
]
CASES += [
    ("backward-missing", 13, "loss.backward()", DATA + """net = nn.Linear(4, 2)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
def epoch():
    for chunk in x.chunk(4):
        opt.zero_grad()
        loss = F.cross_entropy(net(chunk), y[:16])
        opt.step()
for _ in range(3):
    epoch()
""", DATA + """net = nn.Linear(4, 2)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
def epoch():
    for chunk in x.chunk(4):
        opt.zero_grad()
        loss = F.cross_entropy(net(chunk), y[:16])
        loss.backward()
        opt.step()
for _ in range(3):
    epoch()
"""),
    ("step-missing", 11, "opt.step()", DATA + """net = nn.Linear(4, 2)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2)
for _ in range(6):
    F.cross_entropy(net(x), y).backward()
    sched.step()
    opt.zero_grad()
""", DATA + """net = nn.Linear(4, 2)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2)
for _ in range(6):
    F.cross_entropy(net(x), y).backward()
    opt.step()
    sched.step()
    opt.zero_grad()
"""),
    ("zero-gradient-op", 11, ".detach()", DATA + """net = nn.Linear(4, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.05)
target = (x @ torch.tensor([[1.0], [2.0], [0.0], [-1.0]])).round()
for _ in range(10):
    pred = torch.round(net(x))
    opt.zero_grad()
    ((pred - target) ** 2).mean().backward()
    opt.step()
""", DATA + """net = nn.Linear(4, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.05)
target = (x @ torch.tensor([[1.0], [2.0], [0.0], [-1.0]])).round()
for _ in range(10):
    pred = net(x)
    opt.zero_grad()
    ((pred - target) ** 2).mean().backward()
    opt.step()
print(torch.round(net(x))[:3])
"""),
    ("batchnorm-no-eval", 13, "model.eval()",
     DATA + NORMED + """opt = torch.optim.Adam(model.parameters(), lr=0.01)
for _ in range(10):
    opt.zero_grad()
    F.cross_entropy(model(x), y).backward()
    opt.step()
with torch.no_grad():
    print(model(x[:5]).softmax(1)[:, 0])  # what it predicts, not only the class
""", DATA + NORMED + """opt = torch.optim.Adam(model.parameters(), lr=0.01)
for _ in range(10):
    opt.zero_grad()
    F.cross_entropy(model(x), y).backward()
    opt.step()
model.eval()
with torch.no_grad():
    print(model(x[:5]).softmax(1)[:, 0])
"""),
]
CASES.append(
    # attention over a batch of one: the softmax's dimension has a single entry
    ("softmax-wrong-dim", 10, "nn.Softmax(dim=-1)", DATA + """class Attend(nn.Module):
    def __init__(self):
        super().__init__()
        self.softmax = nn.Softmax(dim=0)
    def forward(self, query, keys):
        weights = self.softmax(query @ keys.T)
        return weights @ keys, weights
attend = Attend()
out, weights = attend(x[:1], x[1:6])
print(weights)
""", DATA + """class Attend(nn.Module):
    def __init__(self):
        super().__init__()
        self.softmax = nn.Softmax(dim=-1)
    def forward(self, query, keys):
        weights = self.softmax(query @ keys.T)
        return weights @ keys, weights
attend = Attend()
out, weights = attend(x[:1], x[1:6])
print(weights)
"""))
# one output per sample squeezed to (N,), float 0/1 labels: CrossEntropyLoss reads one sample
# of N classes (torch 2.x: no error); the functional form, and a sigmoid output, too
CASES += [
    ("ce-one-sample", 8, "BCEWithLogitsLoss", DATA + """model = nn.Linear(4, 1)
criterion = nn.CrossEntropyLoss()
opt = torch.optim.SGD(model.parameters(), lr=0.5)
for _ in range(20):
    opt.zero_grad()
    loss = criterion(model(x).squeeze(1), y.float())
    loss.backward()
    opt.step()
""", DATA + """model = nn.Linear(4, 2)
criterion = nn.CrossEntropyLoss()
opt = torch.optim.SGD(model.parameters(), lr=0.5)
for _ in range(20):
    opt.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    opt.step()
"""),
    ("ce-one-sample", 12, "binary_cross_entropy(", DATA + """model = nn.Sequential(
    nn.Linear(4, 1), nn.Sigmoid())
opt = torch.optim.SGD(model.parameters(), lr=0.5)
def train_step(inputs, labels):
    opt.zero_grad()
    loss = F.cross_entropy(model(inputs).view(-1), labels)
    loss.backward()
    opt.step()
for _ in range(20):
    train_step(x, y.float())
""", DATA + """model = nn.Sequential(
    nn.Linear(4, 1), nn.Sigmoid())
opt = torch.optim.SGD(model.parameters(), lr=0.5)
def train_step(inputs, labels):
    opt.zero_grad()
    loss = F.binary_cross_entropy(model(inputs).view(-1), labels)
    loss.backward()
    opt.step()
for _ in range(20):
    train_step(x, y.float())
"""),
]
# a column against a vector: a loss written by hand, an accuracy inside a helper
CASES += [
    ("vector-column-broadcast", 12, "pred.view(-1)", DATA + """target = x @ torch.ones(4)
w = torch.zeros(4, 1, requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1)
for _ in range(30):
    pred = x @ w
    loss = ((pred - target) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print(loss.item())
""", DATA + """target = x @ torch.ones(4)
w = torch.zeros(4, 1, requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1)
for _ in range(30):
    pred = (x @ w).view(-1)
    loss = ((pred - target) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print(loss.item())
"""),
    ("vector-column-broadcast", 9, "labels.view(-1, 1).view(-1)", DATA + TWO_LAYERS + """\
def accuracy(scores, labels):
    hits = scores.argmax(1) == labels.view(-1, 1)
    return hits.float().mean().item()
print(accuracy(model(x), y))
""", DATA + TWO_LAYERS + """def accuracy(scores, labels):
    hits = scores.argmax(1) == labels.view(-1)
    return hits.float().mean().item()
print(accuracy(model(x), y))
"""),
]
# one mistake at two places: each site's change alone leaves the symptom, so the sites are
# tried together (checks.together); two optimizers each cleared before every accumulated pass
CASES += [
    ("dropout-training-flag", 13, "training=self.training", DATA + """class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 8)
        self.out = nn.Linear(8, 2)
    def forward(self, t):
        t = F.dropout(torch.relu(self.fc(t)), p=0.3)
        return F.dropout(self.out(t), p=0.3)
net = Net()
net.eval()
with torch.no_grad():
    print(net(x)[:2])
""", DATA + """class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 8)
        self.out = nn.Linear(8, 2)
    def forward(self, t):
        t = F.dropout(torch.relu(self.fc(t)), p=0.3, training=self.training)
        return F.dropout(self.out(t), p=0.3, training=self.training)
net = Net()
net.eval()
with torch.no_grad():
    print(net(x)[:2])
"""),
    ("zero-grad-erases-accumulation", 12, "+        head_opt.zero_grad()", DATA + """\
body = nn.Linear(4, 8)
head = nn.Linear(8, 2)
body_opt = torch.optim.SGD(body.parameters(), lr=0.1)
head_opt = torch.optim.SGD(head.parameters(), lr=0.1)
for i, chunk in enumerate(x.chunk(8)):
    body_opt.zero_grad()
    head_opt.zero_grad()
    F.cross_entropy(head(body(chunk)), y[i * 8:(i + 1) * 8]).backward()
    if i % 4 == 3:
        body_opt.step()
        head_opt.step()
""", DATA + """body = nn.Linear(4, 8)
head = nn.Linear(8, 2)
body_opt = torch.optim.SGD(body.parameters(), lr=0.1)
head_opt = torch.optim.SGD(head.parameters(), lr=0.1)
for i, chunk in enumerate(x.chunk(8)):
    F.cross_entropy(head(body(chunk)), y[i * 8:(i + 1) * 8]).backward()
    if i % 4 == 3:
        body_opt.step()
        head_opt.step()
        body_opt.zero_grad()
        head_opt.zero_grad()
"""),
]
# a model that ends in a sigmoid, and a loss helper that takes a sigmoid of its output again
# (corpus7 change-detection-sigmoid-output-sigmoided-again-in-loss, after its scoring)
SQUASHED = DATA + """class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 1)
    def forward(self, t):
        return torch.sigmoid(self.body(t)).squeeze(1)
def bce(pred, target):
    return F.binary_cross_entropy({given}, target)
model = Net()
opt = torch.optim.Adam(model.parameters(), lr=0.05)
for _ in range(60):
    opt.zero_grad()
    bce(model(x), y.float()).backward()
    opt.step()
"""
CASES.append(("sigmoid-twice", 14, "binary_cross_entropy(pred, target)",
              SQUASHED.format(given="torch.sigmoid(pred)"), SQUASHED.format(given="pred")))
# zero_grad() between backward() and step() inside a trainer's method called from a loop:
# no loop holds the calls, the steps show it (corpus8 byol-trainer-zero-grad-before-step,
# after its scoring)
TRAINER = DATA + """class Trainer:
    def __init__(self, model):
        self.model = model
        self.opt = torch.optim.SGD(model.parameters(), lr=0.1)
    def train_step(self):
        loss = F.cross_entropy(self.model(x), y)
{order}
        return loss.item()
trainer = Trainer(nn.Linear(4, 2))
for _ in range(10):
    trainer.train_step()
"""
CASES.append(("zero-grad-misplaced", 14, "self.opt.zero_grad()",
              TRAINER.format(order="        loss.backward()\n        self.opt.zero_grad()\n"
                                   "        self.opt.step()"),
              TRAINER.format(order="        self.opt.zero_grad()\n        loss.backward()\n"
                                   "        self.opt.step()")))
# a clip inside the method that computes the loss, called before backward(): where the
# call stands in the training loop is where the clip runs (corpus8
# world-model-clip-before-backward-in-training-step, after its scoring)
CLIPPED = DATA + """class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 2)
    def loss_of(self, t, labels):
        loss = F.cross_entropy(self.body(t) * 40, labels)
{clip_in}        return loss
model = Net()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for _ in range(5):
    opt.zero_grad()
    loss = model.loss_of(x, y)
    loss.backward()
{clip_out}    opt.step()
"""
CASES.append(("clip-order", 13, "torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)",
              CLIPPED.format(clip_in="        torch.nn.utils.clip_grad_norm_(self.parameters(), "
                                     "0.5)\n", clip_out=""),
              CLIPPED.format(clip_in="", clip_out="    torch.nn.utils.clip_grad_norm_("
                                                  "model.parameters(), 0.5)\n")))
# predictions taken with a softmax over the batch of the model's (N, C) scores (corpus8
# fashion-predictions-softmax-dim-zero, after its scoring)
PREDICT = DATA + """model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(20):
    opt.zero_grad()
    F.cross_entropy(model(x), y).backward()
    opt.step()
with torch.no_grad():
    scores = model(x[:16])
    probs = torch.softmax(scores, dim={dim})
    print(probs.argmax(dim=1))
"""
CASES.append(("softmax-over-batch", 15, "dim=1", PREDICT.format(dim=0), PREDICT.format(dim=1)))
IDS = [f"{c[0]}-{i}" for i, c in enumerate(CASES)]


def test_pairwise_differences_of_one_tensor_are_meant(sandbox: Any) -> None:
    # a column made from the vector itself pairs every element with every other on purpose
    not_diagnosed(sandbox, "vector-column-broadcast", DATA + """points = x[:, 0]
gaps = points.unsqueeze(1) - points
print((gaps ** 2).sum().item())
""")


def test_one_sample_with_class_probabilities_is_what_cross_entropy_is_for(sandbox: Any) -> None:
    # soft labels that are a distribution over classes, one unbatched sample: no mistake
    not_diagnosed(sandbox, "ce-one-sample", DATA + """scores = torch.randn(5, requires_grad=True)
target = torch.tensor([0.1, 0.2, 0.3, 0.2, 0.2])
opt = torch.optim.SGD([scores], lr=0.5)
for _ in range(10):
    opt.zero_grad()
    F.cross_entropy(scores, target).backward()
    opt.step()
""")


@pytest.mark.parametrize(("expected", "root", "fix_has", "code", "right"), CASES, ids=IDS)
def test_the_trace_names_the_root_line_and_a_fix_that_makes_the_symptom_go(
        sandbox: Any, expected: str, root: int, fix_has: str, code: str, right: str) -> None:
    found_with_a_working_fix(sandbox, expected, root, fix_has, code)


@pytest.mark.parametrize(("expected", "root", "fix_has", "code", "right"), CASES, ids=IDS)
def test_the_same_program_written_right_gets_no_such_diagnosis(
        sandbox: Any, expected: str, root: int, fix_has: str, code: str, right: str) -> None:
    not_diagnosed(sandbox, expected, right)


# -- ops given a value outside where they are defined (after corpus14's scoring) -------------
# an angle from the cosine of a vector with itself: rounding takes it a hair past 1
ANGLES = DATA + """emb = nn.Linear(4, 8)
opt = torch.optim.SGD(emb.parameters(), lr=0.1)
def angular_loss(a, b):
    cos = F.cosine_similarity(a, b, dim=1)
    return torch.acos({operand}).mean()
for _ in range(3):
    z = emb(x)
    pairs = torch.randint(0, 64, (64,))
    pairs[:8] = torch.arange(8)
    loss = angular_loss(z[:64], z[pairs])
    opt.zero_grad()
    loss.backward()
    opt.step()
"""
# advantages normalised per minibatch, the last of which holds one sample
NORMALISED = DATA + """policy = nn.Linear(4, 2)
opt = torch.optim.Adam(policy.parameters(), lr=1e-3)
adv = torch.randn(65)
for start in range(0, 65, 16):
    mb = slice(start, start + 16)
    a = adv[mb]
    a = (a - a.mean()) / (a.std({keyword}) + 1e-8)
    logp = F.log_softmax(policy(torch.cat([x, x[:1]])[mb]), dim=1)[:, 0]
    loss = -(logp * a).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


@pytest.mark.parametrize(("expected", "root", "fix_has", "code", "right"), [
    ("nan-outside-domain", 11, "clamp(-1 + 1e-7, 1 - 1e-7)",
     ANGLES.format(operand="cos"), ANGLES.format(operand="cos.clamp(-0.999999, 0.999999)")),
    ("nan-outside-domain", 13, "correction=0",
     NORMALISED.format(keyword=""), NORMALISED.format(keyword="correction=0")),
], ids=["acos-past-one", "std-of-one"])
def test_an_op_given_a_value_outside_its_domain_is_named_with_a_tried_fix(
        sandbox: Any, expected: str, root: int, fix_has: str, code: str, right: str) -> None:
    found_with_a_working_fix(sandbox, expected, root, fix_has, code)
    not_diagnosed(sandbox, expected, right)


LOGIT = """import torch
w = torch.tensor([0.5, 0.0, 0.3], requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1)
for i in range(4):
    p = w.clamp({low}, 1)
    loss = torch.logit(p).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


def test_a_nan_no_known_cause_explains_is_shown_where_it_starts_and_not_as_a_cause(
        sandbox: Any) -> None:
    from tutor.diagnosis.reasoning import diagnose

    code = LOGIT.format(low=0)
    found = diagnose(code, sandbox.run(code), sandbox)
    assert found and found[0].id == "nan-first-seen", [d.id for d in found]
    first = found[0]
    assert first.line == 6 and first.generic and not first.fix_verified and first.patch is None
    assert "`logit`" in first.title.en and "-inf" in first.title.en
    assert "0 到 0.5 之间的值" in first.explanation.zh and "not why" in first.explanation.en
    # a square taken of it is not "a fractional power at 0": x ** 2 has a finite slope
    assert "fractional" not in " ".join(c.en for c in first.chain)
    not_diagnosed(sandbox, "nan-first-seen", LOGIT.format(low=1e-4))


def test_a_nan_whose_line_torch_warned_about_is_told_by_the_warning_with_the_chain(
        sandbox: Any) -> None:
    # the trace only locates the nan (std over a batch of one); torch's warning on that
    # line names the cause, and leads with the trace's chain
    from tutor.diagnosis.reasoning import diagnose

    code = DATA + """net = nn.Linear(4, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
one = x[:1]
for _ in range(3):
    opt.zero_grad()
    z = (one - one.mean(dim=0)) / one.std(dim=0)
    loss = net(z).pow(2).mean()
    loss.backward()
    opt.step()
print(loss.item())
"""
    found = diagnose(code, sandbox.run(code), sandbox)
    assert [d.id for d in found][:1] == ["reduction-too-few-values"], [d.id for d in found]
    first = found[0]
    assert first.root_line == first.line == 12 and "`std`" in first.title.en
    assert first.chain and "std" in first.chain[0].en and first.chain[0].zh
    assert "nan-first-seen" not in {d.id for d in found}


# a test set left unnormalised while the training set was standardised (corpus6
# test-set-not-normalized-like-train-resnet and corpus7 face-test-set-without-normalize-zh)
PREPARED = DATA + """raw = torch.randn(200, 4) * 3 + 5
mean, std = raw.mean(0), raw.std(0)
train_x = (raw - mean) / std
train_y = (train_x[:, 0] > 0).long()
test_raw = torch.randn(50, 4) * 3 + 5
test_x = {prepared}
model = nn.Linear(4, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.5)
for _ in range(30):
    opt.zero_grad()
    F.cross_entropy(model(train_x), train_y).backward()
    opt.step()
model.eval()
with torch.no_grad():
    print(model(test_x).argmax(1)[:10])
"""


def test_predictions_on_inputs_prepared_unlike_the_training_data_are_flagged(
        sandbox: Any) -> None:
    from tutor.diagnosis.reasoning import diagnose

    code = PREPARED.format(prepared="test_raw")
    found = diagnose(code, sandbox.run(code), sandbox)
    assert found and found[0].id == "inputs-unlike-training", [d.id for d in found]
    assert found[0].line == 21 and "line 17" in found[0].explanation.en
    assert "第 21 行" in found[0].title.zh
    not_diagnosed(sandbox, "inputs-unlike-training", PREPARED.format(
        prepared="(test_raw - mean) / std"))


# A function that takes a log is called on constants after the training (a check that the
# prior's divergence is 0): it prints inf there, but nothing of it is differentiated and no
# loss or gradient of the training went nan, so no guard against a nan training is offered.
# (corpus32's vae-kl-logvar-squared-as-variance had a clamp "fix" judged wrong.)
AFTER_TRAINING = DATA + """w = torch.randn(4, requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1)


def spread_penalty(scale):
    var = scale ** 2
    return (var - torch.log(var)).mean()


for _ in range(5):
    opt.zero_grad()
    loss = (x @ w - y.float()).pow(2).mean() + 0.01 * spread_penalty(w + 2)
    loss.backward()
    opt.step()
print("penalty at zero:", spread_penalty(torch.zeros(3)).item())
"""


def test_an_inf_computed_after_the_training_is_no_cause_of_a_nan_training(
        sandbox: Any) -> None:
    from tutor.diagnosis.reasoning import diagnose

    result = sandbox.run(AFTER_TRAINING)
    assert result.ok and "penalty at zero: inf" in result.stdout
    found = {d.id for d in diagnose(AFTER_TRAINING, result, sandbox)}
    assert not found & {"nan-from-op", "nan-first-seen", "nan-outside-domain"}, found
    # the same function where the training itself reaches the zero is still found
    inside = AFTER_TRAINING.replace("spread_penalty(w + 2)", "spread_penalty(w * 0)")
    inside_found = {d.id for d in diagnose(inside, sandbox.run(inside), sandbox)}
    assert inside_found & {"nan-from-op", "nan-first-seen"}, inside_found


# A value that must be positive for a log. A hair below 0 (a variance computed as
# E[x²] − E[x]² of equal values) is rounding, clamped to what it is meant to be; far below 0
# (a tanh squashed action scaled past 1, then 1 − a²) the formula leaves the op's domain and
# a clamp or softplus would only hide that: the run says where the nan starts, no guard.
# (corpus32's sac-scaled-tanh-log-correction-nan had a softplus "fix" judged wrong.)
SPREAD_LOG = """import torch
torch.manual_seed(0)
w = torch.tensor([0.1], requires_grad=True)
opt = torch.optim.SGD([w], lr=0.01)
for _ in range(3):
    x = w.expand(7) * 1.0
    var = (x ** 2).mean() - x.mean() ** 2
    loss = torch.log(var)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(loss.item())
"""
SQUASHED_LOG = """import torch
torch.manual_seed(0)
net = torch.nn.Linear(3, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.01)
for _ in range(3):
    action = torch.tanh(net(torch.randn(64, 3)) * 4) * 2.0
    penalty = -torch.log(1 - action.pow(2) + 1e-6).mean()
    opt.zero_grad()
    penalty.backward()
    opt.step()
    print(penalty.item())
"""


def test_a_value_below_zero_by_rounding_is_clamped_and_one_far_below_gets_no_guard(
        sandbox: Any) -> None:
    from tutor.diagnosis.reasoning import diagnose

    first = diagnose(SPREAD_LOG, sandbox.run(SPREAD_LOG), sandbox)[0]
    assert (first.id, first.root_line, first.fix_verified) == ("nan-outside-domain", 8, True)
    assert first.patch is not None and "var.clamp(min=1e-8)" in first.patch
    assert "exact zeros" not in first.explanation.en and "reach -9.31e-10" in \
        first.explanation.en, first.explanation.en
    found = diagnose(SQUASHED_LOG, sandbox.run(SQUASHED_LOG), sandbox)
    assert found and found[0].id == "nan-first-seen" and found[0].root_line == 7, [
        (d.id, d.root_line) for d in found]
    assert not any(d.patch and ("softplus" in d.patch or "clamp" in d.patch) for d in found)
    # a network's own output given to the log is made positive there: its negatives are
    # what an unconstrained layer gives, not a formula's mistake
    raw = SQUASHED_LOG.replace("penalty = -torch.log(1 - action.pow(2) + 1e-6).mean()",
                               "penalty = -torch.log(net(torch.randn(64, 3))).mean()")
    first = diagnose(raw, sandbox.run(raw), sandbox)[0]
    assert (first.id, first.root_line, first.fix_verified) == ("nan-outside-domain", 7, True)
    assert first.patch is not None and "softplus(net(torch.randn(64, 3)))" in first.patch

"""Programs that are right get no diagnosis: the evidence must not turn a program's form
into a false alarm (written for this test: correct versions of the mistakes the checks look
for)."""

from __future__ import annotations

from typing import Any

import pytest

from tutor.diagnosis import checks
from tutor.diagnosis.reasoning import diagnose

CLEAN = {
    'masked attention with -inf before a softmax, trained and evaluated': """import math
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
class Attention(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.qkv = nn.Linear(d, 3 * d)
        self.drop = nn.Dropout(0.1)
    def forward(self, x):
        q, k, v = self.qkv(x).split(x.size(-1), dim=-1)
        att = q @ k.transpose(-2, -1) / math.sqrt(k.size(-1))
        mask = torch.tril(torch.ones(x.size(1), x.size(1), dtype=torch.bool))
        att = att.masked_fill(~mask, float("-inf")).softmax(dim=-1)
        att = F.dropout(att, p=0.1, training=self.training)
        return self.drop(att @ v)
model = Attention()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
x = torch.randn(4, 6, 8)
for _ in range(10):
    opt.zero_grad()
    F.mse_loss(model(x), x).backward()
    opt.step()
model.eval()
with torch.no_grad():
    print(model(x).shape)
""",
    'residual block with an in-place ReLU after its own layer': """import torch
import torch.nn as nn
torch.manual_seed(0)
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.relu = nn.ReLU(inplace=True)
    def forward(self, x):
        identity = x
        out = self.relu(self.bn(self.conv(x)))
        out = out + identity
        return self.relu(out)
model = Block()
opt = torch.optim.SGD(model.parameters(), lr=0.05)
x = torch.randn(8, 4, 6, 6)
for _ in range(5):
    opt.zero_grad()
    model(x).pow(2).mean().backward()
    opt.step()
model.eval()
with torch.no_grad():
    print(model(x).mean())
""",
    'gradient accumulation over micro-batches, zeroed after the step': """import torch
import torch.nn as nn
torch.manual_seed(0)
model = nn.Linear(8, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(32, 8), torch.randn(32, 1)
for epoch in range(3):
    for chunk_x, chunk_y in zip(x.chunk(4), y.chunk(4)):
        (nn.functional.mse_loss(model(chunk_x), chunk_y) / 4).backward()
    opt.step()
    opt.zero_grad()
""",
    'zero-initialized output layer, freezing then unfreezing the body': """import torch
import torch.nn as nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 3))
nn.init.zeros_(model[2].weight)
nn.init.zeros_(model[2].bias)
for p in model[0].parameters():
    p.requires_grad = False
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
x, y = torch.randn(48, 4), torch.randint(0, 3, (48,))
for epoch in range(8):
    if epoch == 4:
        for p in model[0].parameters():
            p.requires_grad = True
    opt.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
""",
    'log-likelihood with log_softmax and NLLLoss, probabilities only for display': """import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
model = nn.Linear(5, 3)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(40, 5), torch.randint(0, 3, (40,))
for _ in range(20):
    opt.zero_grad()
    F.nll_loss(F.log_softmax(model(x), dim=1), y).backward()
    opt.step()
with torch.no_grad():
    probs = torch.softmax(model(x), dim=1)
    print(probs.max(1).values.mean(), F.cross_entropy(model(x), y))
""",
    'classifier with dropout, eval at prediction': """import torch
import torch.nn as nn
torch.manual_seed(0)
x = torch.randn(64, 10)
y = torch.randint(0, 3, (64,))
model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Dropout(0.2), nn.Linear(32, 3))
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(30):
    model.train()
    opt.zero_grad()
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
model.eval()
with torch.no_grad():
    acc = (model(x).argmax(1) == y).float().mean()
print(loss.item(), acc.item())
""",
    'manual SGD under no_grad': """import torch
w = torch.zeros(3, requires_grad=True)
x = torch.randn(50, 3)
y = x @ torch.tensor([1.0, -2.0, 0.5])
for _ in range(100):
    loss = ((x @ w - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
        w.grad.zero_()
print(w)
""",
    'RNN with a detached state': """import torch
import torch.nn as nn
rnn = nn.GRUCell(4, 8)
head = nn.Linear(8, 1)
opt = torch.optim.SGD(list(rnn.parameters()) + list(head.parameters()), lr=0.05)
h = torch.zeros(1, 8)
seq = torch.randn(20, 1, 4)
for t in range(20):
    h = h.detach()
    h = rnn(seq[t], h)
    loss = head(h).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
    'GAN with a detached fake for the critic': """import torch
import torch.nn as nn
G = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 2))
D = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 1))
g_opt = torch.optim.Adam(G.parameters(), lr=1e-3)
d_opt = torch.optim.Adam(D.parameters(), lr=1e-3)
bce = nn.BCEWithLogitsLoss()
for _ in range(10):
    z = torch.randn(16, 2)
    real = torch.randn(16, 2) + 3
    fake = G(z)
    d_loss = bce(D(real), torch.ones(16, 1)) + bce(D(fake.detach()), torch.zeros(16, 1))
    d_opt.zero_grad()
    d_loss.backward()
    d_opt.step()
    g_loss = bce(D(fake), torch.ones(16, 1))
    g_opt.zero_grad()
    g_loss.backward()
    g_opt.step()
""",
    'second derivative with create_graph': """import torch
x = torch.tensor([2.0, 3.0], requires_grad=True)
y = (x ** 3).sum()
g, = torch.autograd.grad(y, x, create_graph=True)
g.sum().backward()
print(x.grad)
""",
    'ModuleList and BatchNorm, eval at the end': """import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
        self.bn = nn.BatchNorm1d(4)
    def forward(self, x):
        for layer in self.layers:
            x = torch.relu(layer(x))
        return self.bn(x).sum(1, keepdim=True)
net = Net()
opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
data = torch.randn(32, 4)
target = torch.randn(32, 1)
for _ in range(15):
    opt.zero_grad()
    nn.functional.mse_loss(net(data), target).backward()
    opt.step()
net.eval()
print(net(torch.randn(1, 4)))
""",
    'gradient accumulation on purpose': """import torch
# gradient accumulation on purpose: step every 4 micro-batches
model = torch.nn.Linear(5, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
data = torch.randn(32, 5)
target = torch.randn(32, 1)
opt.zero_grad()
for i in range(8):
    xb, yb = data[i*4:(i+1)*4], target[i*4:(i+1)*4]
    loss = ((model(xb) - yb) ** 2).mean() / 4
    loss.backward()
    if (i + 1) % 4 == 0:
        opt.step()
        opt.zero_grad()
""",
    'softmax only for display after training': """import torch
import torch.nn as nn
import torch.nn.functional as F
emb = nn.Embedding(20, 8)
clf = nn.Linear(8, 2)
opt = torch.optim.AdamW(list(emb.parameters()) + list(clf.parameters()), lr=0.01)
tokens = torch.randint(0, 20, (16, 5))
labels = torch.randint(0, 2, (16,))
for _ in range(20):
    logits = clf(emb(tokens).mean(1))
    loss = F.cross_entropy(logits, labels)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
probs = F.softmax(logits, dim=1)
print(probs[0])
""",
    'freezing all but one weight on purpose': """import torch
import torch.nn as nn
model = nn.Linear(3, 1)
for p in model.parameters():
    p.requires_grad = False
model.weight.requires_grad = True
opt = torch.optim.SGD([model.weight], lr=0.1)
x, y = torch.randn(10, 3), torch.randn(10, 1)
for _ in range(10):
    opt.zero_grad()
    nn.functional.mse_loss(model(x), y).backward()
    opt.step()
""",
    'losses logged with .item()': """import torch
import numpy as np
w = torch.randn(3, requires_grad=True)
history = []
for step in range(20):
    loss = (w ** 2).sum()
    loss.backward()
    history.append(loss.item())
    with torch.no_grad():
        w -= 0.1 * w.grad
    w.grad = None
print(np.mean(history))
""",
}


@pytest.mark.parametrize("name", list(CLEAN))
def test_a_correct_program_gets_no_diagnosis(sandbox: Any, monkeypatch: Any,
                                              name: str) -> None:
    monkeypatch.setattr(checks, "DEBUG", True)
    code = CLEAN[name]
    result = sandbox.run(code)
    assert result.ok, result.error
    assert [d.id for d in diagnose(code, result, sandbox)] == []

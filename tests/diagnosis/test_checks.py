"""Each evidence check, on small programs of its own (not corpus items): the diagnosis names
the root-cause line, the chain of evidence, and a fix that was applied and re-run."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import pytest

from tutor.diagnosis import checks
from tutor.diagnosis.reasoning import diagnose

TRAIN = """import torch
import torch.nn as nn
torch.manual_seed(1)
x = torch.randn(32, 3)
y = x.sum(1, keepdim=True)
"""

CASES = [
    # silent bugs: (id, root line, program)
    ("backward-not-called", 11, TRAIN + """net = nn.Linear(3, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for _ in range(20):
    opt.zero_grad()
    err = ((net(x) - y) ** 2).mean()
    err.backward
    opt.step()
"""),
    ("step-not-called", 12, TRAIN + """net = nn.Linear(3, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for _ in range(20):
    opt.zero_grad()
    err = ((net(x) - y) ** 2).mean()
    err.backward()
    opt.step
"""),
    ("missing-zero-grad", 8, TRAIN + """net = nn.Linear(3, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.05)
for _ in range(30):
    err = ((net(x) - y) ** 2).mean()
    err.backward()
    opt.step()
"""),
    ("zero-grad-misplaced", 11, TRAIN + """net = nn.Linear(3, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for _ in range(20):
    err = ((net(x) - y) ** 2).mean()
    err.backward()
    opt.zero_grad()
    opt.step()
"""),
    ("optimizer-wrong-params", 8, TRAIN + """net = nn.Linear(3, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
net = nn.Linear(3, 1)
for _ in range(20):
    opt.zero_grad()
    ((net(x) - y) ** 2).mean().backward()
    opt.step()
"""),
    ("lr-too-high", 7, TRAIN + """net = nn.Linear(3, 1)
opt = torch.optim.SGD(net.parameters(), lr=3.0)
for _ in range(15):
    opt.zero_grad()
    err = ((net(x * 4) - y) ** 2).mean()
    err.backward()
    opt.step()
"""),
    ("softmax-before-ce", 7, TRAIN + """labels = (x[:, 0] > 0).long()
net = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 2), nn.Softmax(dim=1))
crit = nn.CrossEntropyLoss()
opt = torch.optim.SGD(net.parameters(), lr=0.5)
for _ in range(40):
    opt.zero_grad()
    crit(net(x), labels).backward()
    opt.step()
"""),
    ("double-sigmoid", 12, TRAIN + """labels = (x[:, :1] > 0).float()
head = nn.Linear(3, 1)
crit = nn.BCEWithLogitsLoss()
opt = torch.optim.SGD(head.parameters(), lr=1.0)
for _ in range(40):
    opt.zero_grad()
    p = torch.sigmoid(head(x))
    crit(p, labels).backward()
    opt.step()
"""),
    ("dropout-no-eval", 14, TRAIN + """net = nn.Sequential(nn.Linear(3, 16), nn.Dropout(0.5),
                    nn.Linear(16, 1))
opt = torch.optim.SGD(net.parameters(), lr=0.05)
for _ in range(10):
    opt.zero_grad()
    ((net(x) - y) ** 2).mean().backward()
    opt.step()
probe = torch.ones(1, 3)
with torch.no_grad():
    print(net(probe), net(probe))
"""),
    ("requires-grad-after-use", 9, TRAIN + """w = torch.zeros(3, 1)
b = torch.zeros(1, requires_grad=True)
out = x @ w + b
w.requires_grad_(True)
((out - y) ** 2).mean().backward()
print(w.grad, b.grad)
"""),
    ("graph-cut-silent", 12, TRAIN + """class Gate(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 1)
        self.gain = nn.Parameter(torch.ones(1))
    def forward(self, t):
        return self.lin(t) * self.gain.detach()
m = Gate()
opt = torch.optim.SGD(m.parameters(), lr=0.1)
for _ in range(10):
    opt.zero_grad()
    ((m(x) - 3 * y) ** 2).mean().backward()
    opt.step()
"""),
    # exceptions: the root-cause line is not the failing line
    ("backward-twice-carried", 10, TRAIN + """cell = nn.RNNCell(3, 3)
opt = torch.optim.SGD(cell.parameters(), lr=0.1)
state = torch.zeros(1, 3)
for t in range(3):
    state = cell(x[t:t + 1], state)
    opt.zero_grad()
    state.pow(2).sum().backward()
    opt.step()
"""),
    ("no-grad-fn-detached", 7, TRAIN + """net = nn.Linear(3, 1)
feat = net(x).detach()
err = ((feat - y) ** 2).mean()
err.backward()
"""),
    ("inplace-modified-output", 8, TRAIN + """w = torch.ones(3, 1, requires_grad=True)
h = torch.tanh(x @ w)
h += 1
h.sum().backward()
"""),
    ("linear-in-features", 9, TRAIN + """class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(5, 1)
    def forward(self, t):
        return self.fc(t)
print(Head()(x))
"""),
    ("grad-none-nonleaf", 6, TRAIN + """w = torch.randn(3, 1, requires_grad=True) * 0.1
err = ((x @ w - y) ** 2).mean()
err.backward()
with torch.no_grad():
    w -= 0.1 * w.grad
"""),
]


@pytest.mark.parametrize(("expected", "root", "code"), CASES, ids=[c[0] for c in CASES])
def test_check_names_root_line_chain_and_a_verified_fix(sandbox: Any, expected: str, root: int,
                                                         code: str, monkeypatch: Any) -> None:
    monkeypatch.setattr(checks, "DEBUG", True)
    result = sandbox.run(code)
    found = diagnose(code, result, sandbox)
    assert found, "no diagnosis"
    first = found[0]
    assert first.id == expected
    assert first.root_line == root
    assert first.chain and all(step.en and step.zh for step in first.chain)
    assert first.fix_verified is True and first.fix_check is not None and first.patch


def test_a_fix_that_does_not_work_is_not_shown(sandbox: Any) -> None:
    # targets of different sizes: no reshape makes them agree, so no fix is shown as tried
    code = TRAIN + ("net = nn.Linear(3, 1)\nerr = nn.functional.mse_loss(net(x), y[:1])\n"
                    "err.backward()\n")
    found = diagnose(code, sandbox.run(code), sandbox)
    first = found[0]
    assert first.id == "loss-target-broadcast"
    assert first.fix_verified is not True and first.fix_check is None and first.patch is None


def test_a_clean_program_gets_no_evidence_diagnosis(sandbox: Any) -> None:
    code = TRAIN + """net = nn.Linear(3, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for _ in range(20):
    opt.zero_grad()
    ((net(x) - y) ** 2).mean().backward()
    opt.step()
"""
    assert diagnose(code, sandbox.run(code), sandbox) == []


def test_every_check_a_module_defines_is_one_it_lists() -> None:
    """A check its module does not list never runs (check_relu_output was left so)."""
    unlisted = [f"{module.__name__}.{name}" for module in checks.CHECK_MODULES
                for name, func in inspect.getmembers(module, inspect.isfunction)
                if name.startswith("check_") and func.__module__ == module.__name__
                and func not in (*module.EXCEPTION_CHECKS, *module.SILENT_CHECKS)]
    assert unlisted == []
    modules = {path.stem for path in (Path(__file__).parents[2] / "tutor" / "diagnosis")
               .glob("*_checks.py")}
    assert modules == {module.__name__.rsplit(".", 1)[1] for module in checks.CHECK_MODULES}

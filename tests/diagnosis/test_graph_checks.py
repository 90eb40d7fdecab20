"""The checks of exceptions about the graph, on small programs of their own (not corpus
items, and shapes the corpus does not show): the root-cause line, the chain, and a fix that
was applied and re-run."""

from __future__ import annotations

from typing import Any

import pytest

from tutor.diagnosis.reasoning import diagnose

from .runs import first_for_error, verified_diagnosis

CASES = [
    # a layer built in place inside a Sequential changes what the layer before it saved
    ("inplace-modified-output", 4, "inplace=False", """import torch
import torch.nn as nn

net = nn.Sequential(nn.Linear(3, 3), nn.Sigmoid(), nn.LeakyReLU(0.1, inplace=True))
out = net(torch.randn(2, 3))
out.sum().backward()
"""),
    # an in-place change of a value a later op saved, inside a method
    ("inplace-modified-output", 6, "x = x * self.gain", """import torch

class Block(torch.nn.Module):
    def forward(self, x):
        y = x.pow(2)
        x *= self.gain
        return y + x

block = Block()
block.gain = 2.0
inp = torch.rand(3, requires_grad=True)
block(inp.clone()).sum().backward()
"""),
    # the optimizer steps between two backward passes over graphs that saved the weights
    ("inplace-modified-output", 10, "step", """import torch

layer = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Tanh(), torch.nn.Linear(2, 2))
opt = torch.optim.SGD(layer.parameters(), lr=0.1)
x = torch.randn(4, 2)
out = torch.tanh(layer(x))
first = out.pow(2).mean()
second = out.abs().mean()
first.backward(retain_graph=True)
opt.step()
second.backward()
opt.step()
"""),
    # a tensor created without requires_grad: the only leaf of the graph
    ("no-grad-fn-no-leaf", 3, "requires_grad=True", """import torch

scale = torch.full((2,), 3.0)
energy = (scale ** 2).sum()
energy.backward()
print(scale.grad)
"""),
    # NumPy math on a .numpy() copy inside a loss function
    ("no-grad-fn-python-number", 5, "torch.mean", """import numpy as np
import torch

def hinge(score):
    margins = np.maximum(0.0, 1.0 - score.detach().numpy())
    return torch.as_tensor(np.mean(margins))

w = torch.randn(4, requires_grad=True)
hinge(w * 2).backward()
"""),
    # values kept as Python numbers in a list comprehension-free loop, then rebuilt
    ("no-grad-fn-python-number", 9, "torch.stack", """import torch

w = torch.ones(3, requires_grad=True)
parts = []
for k in range(3):
    part = (w * k).sum()
    parts.append(part.item())

total = torch.tensor(parts).mean()
total.backward()
"""),
    # a comparison: its soft version (a sigmoid) is tried, and kept (an argmin's smallest
    # values are not its positions: tests/diagnosis/test_calibration.py)
    ("no-grad-fn", 5, "torch.sigmoid(gate)", """import torch

gate = torch.nn.Parameter(torch.randn(4))
x = torch.randn(4)
mask = (gate > 0).float()
(mask * x).sum().backward()
"""),
    # a GAN-like pair of losses over one forward pass, in a function
    ("backward-twice", 10, "fake.detach()", """import torch

enc = torch.nn.Linear(3, 3)
critic = torch.nn.Linear(3, 1)
c_opt = torch.optim.SGD(critic.parameters(), lr=0.1)
e_opt = torch.optim.SGD(enc.parameters(), lr=0.1)

def round_(x):
    fake = torch.tanh(enc(x))
    c_loss = critic(fake).pow(2).mean()
    c_opt.zero_grad()
    c_loss.backward()
    c_opt.step()
    e_loss = (1 - critic(fake)).pow(2).mean()
    e_opt.zero_grad()
    e_loss.backward()
    e_opt.step()

round_(torch.randn(4, 3))
"""),
    # two losses over one graph, back to back: one backward of the sum
    ("backward-twice", 7, "(recon + reg).backward()", """import torch

z = torch.randn(5, requires_grad=True)
h = torch.sigmoid(z * 3)
recon = (h - 0.5).pow(2).sum()
reg = h.abs().sum()
recon.backward()
reg.backward()
print(z.grad)
"""),
    # a running sum of losses that is itself differentiated (the same backward() worked on
    # the pass before: a graph carried across passes)
    ("backward-twice-carried", 8, "loss.item()", """import torch

w = torch.zeros(2, requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1)
epoch_loss = 0
for step in range(3):
    loss = (w - torch.tensor([1.0, -1.0])).pow(2).sum()
    epoch_loss += loss
    opt.zero_grad()
    epoch_loss.backward()
    opt.step()
"""),
    # .grad cleared before any backward, for several tensors
    ("grad-is-none", 6, ".grad = None", """import torch

a = torch.zeros(2, requires_grad=True)
b = torch.zeros(2, requires_grad=True)
for _ in range(2):
    a.grad.zero_()
    b.grad.zero_()
    ((a + 1) * (b - 2)).sum().backward()
"""),
    # w rebound to a computed tensor in the loop: on the next pass its .grad is None
    ("grad-none-nonleaf", 6, "torch.no_grad()", """import torch

w = torch.tensor([2.0, -1.0], requires_grad=True)
for _ in range(3):
    (w ** 2).sum().backward()
    w = w - 0.05 * w.grad
print(w)
"""),
]


@pytest.mark.parametrize(("expected", "root", "fix_has", "code"), CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_graph_check_names_the_root_line_and_a_verified_fix(
        sandbox: Any, expected: str, root: int, fix_has: str, code: str) -> None:
    verified_diagnosis(sandbox, code, {expected}, root, fix_has)


def test_retain_graph_is_the_last_resort_and_a_follow_up_never_deletes_code(
        sandbox: Any) -> None:
    # the second backward reuses a forward pass the optimizer step has since changed:
    # retain_graph would need the step removed; recomputing the output is the fix
    code = """import torch

layer = torch.nn.Linear(3, 1)
opt = torch.optim.SGD(layer.parameters(), lr=0.1)
x = torch.randn(4, 3)
out = layer(x)
out.mean().backward()
opt.step()
opt.zero_grad()
out.pow(2).mean().backward()
opt.step()
"""
    first = diagnose(code, sandbox.run(code), sandbox)[0]
    assert first.id == "backward-twice" and first.fix_verified is True
    assert "retain_graph" not in (first.patch or "")
    assert "-opt.step()" not in (first.patch or "")


HELPER_BACKPROPAGATES = """import torch
import torch.nn as nn


def loss_and_backward(model, x, y):
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    return loss


model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(8, 3), torch.randn(8, 1)
opt.zero_grad()
loss = loss_and_backward(model, x, y)
loss.backward()
opt.step()
"""


def test_the_same_loss_backpropagated_twice_is_backpropagated_once(sandbox: Any) -> None:
    """corpus16 rdrop-loss-backward-called-twice (after its scoring, judged wrong): a helper
    that calls backward() and returns the loss, and the caller's backward() on it again.
    retain_graph runs it, and doubles every gradient: the second call is deleted instead."""
    first = verified_diagnosis(sandbox, HELPER_BACKPROPAGATES, {"backward-twice"}, 7,
                               "-loss.backward()")
    assert first.patch is not None and "retain_graph" not in first.patch
    assert "line 16" in first.fix.en and HELPER_BACKPROPAGATES.splitlines()[15] == \
        "loss.backward()"


def test_two_backward_passes_with_gradient_vectors_are_both_kept(sandbox: Any) -> None:
    """The course's rows of a Jacobian: the same z backpropagated with [[1, 0]] then [[0, 1]]
    means two passes: neither is deleted (z computed again for the second is the fix)."""
    code = """import torch
x = torch.tensor([[1., 2.]], requires_grad=True)
w = torch.tensor([[1., 3.], [2., 4.]])
z = torch.mm(x, w)
z.backward(torch.tensor([[1., 0.]]))
z.backward(torch.tensor([[0., 1.]]))
print(x.grad)
"""
    found = diagnose(code, sandbox.run(code), sandbox)
    assert found[0].id == "backward-twice" and found[0].fix_verified, found[0].fix.en
    assert not any("delete the backward()" in d.fix.en for d in found)
    assert "+z.backward" in (found[0].patch or "") or "torch.mm(x, w)" in (found[0].patch or "")
    # the accumulation lesson's y.backward() twice, side by side: the second pass is meant
    twice = "import torch\nw = torch.ones(2, requires_grad=True)\ny = (w * 3).sum()\n" \
        "y.backward()\ny.backward()\nprint(w.grad)\n"
    assert not any("delete the backward()" in d.fix.en
                   for d in diagnose(twice, sandbox.run(twice), sandbox))


def test_numpy_of_a_product_names_the_product_not_the_lines_first_numpy(sandbox: Any) -> None:
    """`xs.numpy()` is fine (no grad); `np.asarray(xs * w)` is what requires grad: the text
    names what the working change detaches."""
    code = """import numpy as np
import torch
xs = torch.linspace(0, 1, 5)
w = torch.tensor(2.0, requires_grad=True)
pairs = xs.numpy(), np.asarray(xs * w)
print(pairs)
"""
    first = first_for_error(sandbox, code)
    assert (first.id, first.fix_verified) == ("numpy-requires-grad", True)
    assert "`xs * w`" in first.title.en and "`xs`" not in first.title.en


def test_of_two_conversions_on_a_line_the_one_that_requires_grad_is_named(sandbox: Any) -> None:
    # `steps.numpy()` converts a plain range, `curve[i].numpy()` a row of a layer's weight:
    # the trials tell them apart (detaching `steps` still fails), and the diagnosis names the
    # second, not the line's first `.numpy()` (corpus29's embedding-inspector-plot-weights-numpy)
    code = """import torch
layer = torch.nn.Linear(5, 3)
curve = layer.weight * 2
steps = torch.arange(curve.shape[1])
for i in range(curve.shape[0]):
    pairs = list(zip(steps.numpy(), curve[i].numpy()))
    print(len(pairs))
"""
    first = first_for_error(sandbox, code)
    assert (first.id, first.fix_verified, first.root_line) == ("numpy-requires-grad", True, 6)
    assert "`curve[i]`" in first.title.en and "`steps`" not in first.title.en
    assert first.patch is not None and "curve[i].detach().numpy()" in first.patch
    assert "steps.detach()" not in first.patch


def test_a_step_moved_past_the_clearing_of_its_gradients_is_refused(sandbox: Any) -> None:
    # both losses computed first, the critic stepped, every gradient cleared, then the
    # generator's backward() fails on the critic's changed weights. Moving the critic's step
    # below that backward() makes the error go away, but the critic's own gradients are then
    # cleared before it steps: it would step on the generator's loss. The change is refused,
    # and the diagnosis says to compute the second loss after the step (corpus29's
    # bigan-generator-backward-after-d-step had the move shown as a working fix).
    code = """import torch
import torch.nn as nn
torch.manual_seed(0)
gen, critic = nn.Linear(3, 4), nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
opt_g = torch.optim.SGD(gen.parameters(), lr=0.1)
opt_c = torch.optim.SGD(critic.parameters(), lr=0.1)
for _ in range(3):
    fake, real = gen(torch.randn(8, 3)), torch.randn(8, 4)
    c_loss = critic(fake).mean() - critic(real).mean()
    g_loss = -critic(fake).mean()
    c_loss.backward(retain_graph=True)
    opt_c.step()
    opt_c.zero_grad()
    opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()
"""
    first = first_for_error(sandbox, code)
    assert first.id == "inplace-modified-output" and first.root_line == 12, first.id
    assert first.fix_verified is not True and not first.patch
    chain = " ".join(step.en for step in first.chain)
    assert "are cleared before `opt_c` steps" in chain, chain
    assert "Compute the second loss again after the step" in first.fix.en

"""One mistake, two spellings, the same diagnosis: the value that matters made inline or by a
helper function, a tensor used where it was made or passed into a function as a parameter.
The source analyses follow a value through calls, parameters and returns
(``tutor/diagnosis/calls.py``, ``Flow.assigned_before``, ``Flow.made_by``,
``Source.source_of``); each test holds a program whose second spelling they once missed."""

from __future__ import annotations

import pytest

from tutor.diagnosis import checks, explain
from tutor.diagnosis.checks import Ctx, candidates
from tutor.diagnosis.fixes import VERIFY_LIMITS
from tutor.diagnosis.flow import Flow
from tutor.diagnosis.models import Diagnosis
from tutor.diagnosis.reasoning import diagnose
from tutor.sandbox import Sandbox


def first(sandbox: Sandbox, code: str) -> Diagnosis:
    debug, checks.DEBUG = checks.DEBUG, True
    try:
        found = diagnose(code, sandbox.run(code), sandbox)
    finally:
        checks.DEBUG = debug
    assert found, code
    return found[0]


def from_message(sandbox: Sandbox, code: str) -> str:
    """The id of the diagnosis the error's message and the source give (no re-run)."""
    return explain(sandbox.run(code), code)[0].id


def candidate_lines(sandbox: Sandbox, code: str, wanted: str) -> set[int]:
    """The root lines the evidence checks propose for ``wanted``, before any fix is tried."""
    rerun = sandbox.run(code, limits=VERIFY_LIMITS, instrument=True)
    flow = Flow.of(code)
    assert flow is not None and rerun.evidence is not None
    ctx = Ctx(code=code, flow=flow, result=rerun, evidence=rerun.evidence, error=rerun.error)
    debug, checks.DEBUG = checks.DEBUG, True
    try:
        return {c.root_line for c in candidates(ctx) if c.id == wanted}
    finally:
        checks.DEBUG = debug


FLOAT_INLINE = """import torch
w = torch.tensor([1.0, 2.0], requires_grad=True)
running = (w ** 2).sum().item()
running.backward()
"""
FLOAT_PASSED = """import torch
w = torch.tensor([1.0, 2.0], requires_grad=True)
running = (w ** 2).sum().item()
def step(loss):
    loss.backward()
step(running)
"""


@pytest.mark.parametrize("code", [FLOAT_INLINE, FLOAT_PASSED], ids=["inline", "parameter"])
def test_a_number_passed_as_the_loss_is_traced_to_its_item(sandbox: Sandbox, code: str
                                                           ) -> None:
    got = first(sandbox, code)
    assert (got.id, got.root_line, got.fix_verified) == ("backward-on-python-number", 3, True)


HIDDEN_INLINE = """import torch
x = torch.randn(4, 3)
w = torch.randn(3, 5, requires_grad=True)
hidden = torch.relu(x @ w)
hidden.sum().backward()
print(hidden.grad.norm())
"""
HIDDEN_PASSED = """import torch
x = torch.randn(4, 3)
w = torch.randn(3, 5, requires_grad=True)
hidden = torch.relu(x @ w)
hidden.sum().backward()
def report(h):
    print(h.grad.norm())
report(hidden)
"""


@pytest.mark.parametrize("code", [HIDDEN_INLINE, HIDDEN_PASSED], ids=["inline", "parameter"])
def test_a_non_leaf_grad_read_in_a_function_is_fixed_where_it_was_made(
        sandbox: Sandbox, code: str) -> None:
    got = first(sandbox, code)
    assert (got.id, got.root_line, got.fix_verified) == ("grad-none-nonleaf", 4, True)
    assert got.patch is not None and "+hidden.retain_grad()" in got.patch  # the caller's name


ITEM_INLINE = """import torch
w = torch.tensor(3.0, requires_grad=True)
values = [(w * x).item() for x in [1.0, 2.0]]
total = torch.tensor(sum(values))
total.backward()
"""
ITEM_PASSED = """import torch
w = torch.tensor(3.0, requires_grad=True)
values = [(w * x).item() for x in [1.0, 2.0]]
total = torch.tensor(sum(values))
def step(loss):
    loss.backward()
step(total)
"""


@pytest.mark.parametrize("code", [ITEM_INLINE, ITEM_PASSED], ids=["inline", "parameter"])
def test_a_graph_lost_to_item_before_a_call_is_named(sandbox: Sandbox, code: str) -> None:
    got = first(sandbox, code)
    assert (got.id, got.root_line) == ("no-grad-fn-python-number", 3)
    # the message's own reading follows the parameter to the value it was given
    assert from_message(sandbox, code) == "no-grad-fn-python-number"


INT_INLINE = """import torch
positions = torch.arange(10)
positions.requires_grad_()
"""
INT_HELPER = """import torch
def make_positions():
    return torch.arange(10)
positions = make_positions()
positions.requires_grad_()
"""


@pytest.mark.parametrize(("code", "root"), [(INT_INLINE, 2), (INT_HELPER, 3)],
                         ids=["inline", "helper"])
def test_an_integer_tensor_made_by_a_helper_is_fixed_in_the_helper(
        sandbox: Sandbox, code: str, root: int) -> None:
    got = first(sandbox, code)
    assert (got.id, got.root_line, got.fix_verified) == ("int-requires-grad", root, True)
    assert got.patch is not None and "dtype=torch.float32" in got.patch


LEAF_INLINE = """import torch
a = torch.randn(())
x = torch.arange(0, 5, dtype=torch.float32)
loss = ((a * x - x) ** 2).mean()
loss.backward()
"""
LEAF_HELPER = """import torch
def make_a():
    return torch.randn(())
a = make_a()
x = torch.arange(0, 5, dtype=torch.float32)
loss = ((a * x - x) ** 2).mean()
loss.backward()
"""


@pytest.mark.parametrize("code", [LEAF_INLINE, LEAF_HELPER], ids=["inline", "helper"])
def test_a_leaf_made_by_a_helper_without_requires_grad_is_named(sandbox: Sandbox,
                                                                code: str) -> None:
    assert first(sandbox, code).id == "no-grad-fn-no-leaf"
    # the message's own reading looks into what the helper returns (a helper was "unknown")
    assert from_message(sandbox, code) == "no-grad-fn-no-leaf"


TWICE_INLINE = """import torch
import torch.nn as nn
trunk = nn.Linear(8, 4)
inputs = torch.randn(20, 8)
targets = torch.randn(20, 4)
shared = trunk(inputs)
for i in range(3):
    err = ((shared - targets) ** 2).mean()
    err.backward()
"""
TWICE_HELPER = """import torch
import torch.nn as nn
trunk = nn.Linear(8, 4)
inputs = torch.randn(20, 8)
def make_targets():
    return torch.randn(20, 4)
targets = make_targets()
shared = trunk(inputs)
for i in range(3):
    err = ((shared - targets) ** 2).mean()
    err.backward()
"""


@pytest.mark.parametrize(("code", "root"), [(TWICE_INLINE, 6), (TWICE_HELPER, 8)],
                         ids=["inline", "helper"])
def test_data_a_helper_makes_is_not_blamed_for_a_freed_graph(sandbox: Sandbox, code: str,
                                                             root: int) -> None:
    got = first(sandbox, code)
    assert (got.id, got.root_line) == ("backward-twice-loop", root)
    assert candidate_lines(sandbox, code, "backward-twice-loop") == {root}


def test_flow_follows_parameters_globals_and_returns() -> None:
    flow = Flow.of("import torch\n"
                   "def make():\n    return torch.zeros(3)\n"       # 2-3
                   "def use(t, scale=2):\n    return t * scale * k\n"  # 4-5
                   "k = 3\n"                                          # 6
                   "x = make()\n"                                     # 7
                   "y = use(x)\n"                                     # 8
                   "z = use(t=x + 1)\n")                              # 9
    assert flow is not None
    made = flow.assigned_before("t", 5)
    assert made is not None and made.lineno == 7  # the first call's argument, x
    assert flow.name_at(made, "t") == "x"
    assert flow.made_by(made).lineno == 3  # what make() returns
    global_k = flow.assigned_before("k", 5)
    assert global_k is not None and global_k.lineno == 6
    assert flow.assigned_before("scale", 5) is None  # a default, never given
    assert 7 in flow.slice_lines("y", 9)


TWICE_PASSED = """import torch
import torch.nn as nn
def fit(features, targets):
    for i in range(3):
        err = ((features - targets) ** 2).mean()
        err.backward()
trunk = nn.Linear(8, 4)
inputs = torch.randn(20, 8)
targets = torch.randn(20, 4)
shared = trunk(inputs)
fit(shared, targets)
"""


@pytest.mark.parametrize(("code", "root"), [(TWICE_INLINE, 6), (TWICE_PASSED, 10)],
                         ids=["inline", "parameter"])
def test_a_graph_built_once_and_passed_into_a_training_loop_is_named(
        sandbox: Sandbox, code: str, root: int) -> None:
    # the loop's function comes first in the file: the value runs before the loop all the
    # same (it is the argument of the call that runs the loop)
    assert candidate_lines(sandbox, code, "backward-twice-loop") == {root}
    got = first(sandbox, code)
    assert (got.root_line, got.fix_verified) == (root, True)
    if code is TWICE_PASSED:  # built again in the loop, with the names fit knows
        assert got.patch is not None and "+        features = trunk(inputs)" in got.patch


CONV_INLINE = """import torch
import torch.nn as nn
conv = nn.Conv2d(1, 4, 3)
image = torch.rand(28, 28)
out = conv(image)
"""
CONV_WRAPPED = """import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3)
    def forward(self, x):
        return self.conv(x)
net = Net()
image = torch.rand(28, 28)
out = net(image)
"""


@pytest.mark.parametrize(("code", "line"), [(CONV_INLINE, 5), (CONV_WRAPPED, 11)],
                         ids=["inline", "forward"])
def test_an_input_a_forward_only_hands_on_is_blamed_where_it_was_given(
        sandbox: Sandbox, code: str, line: int) -> None:
    # the error is raised inside forward (line 8), which passes its parameter on unchanged
    got = first(sandbox, code)
    assert (got.id, got.root_line or got.line) == ("conv-input-rank", line)
    assert "`image.unsqueeze(0)`" in got.fix.en  # the caller's name, not forward's `x`


NO_GRAD_INLINE = """import torch
import torch.nn as nn
model = nn.Linear(3, 1)
x = torch.randn(8, 3)
with torch.no_grad():
    pred = model(x)
loss = pred.pow(2).mean()
loss.backward()
"""
NO_GRAD_WRAPPED = """import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(3, 1)
    def forward(self, x):
        return self.layer(x)
model = Net()
x = torch.randn(8, 3)
with torch.no_grad():
    pred = model(x)
loss = pred.pow(2).mean()
loss.backward()
"""


@pytest.mark.parametrize(("code", "block"), [(NO_GRAD_INLINE, 5), (NO_GRAD_WRAPPED, 11)],
                         ids=["inline", "forward"])
def test_a_no_grad_block_around_the_model_call_is_found_from_inside_forward(
        sandbox: Sandbox, code: str, block: int) -> None:
    # the re-run records the op that lost the graph inside forward (line 8)
    got = first(sandbox, code)
    assert (got.id, got.root_line, got.fix_verified) == ("no-grad-fn-no-grad-block", block,
                                                         True)


DEVICE_INLINE = """import torch
device = "gpu"
x = torch.randn(3)
x = x.to(device)
"""
DEVICE_PASSED = """import torch
device = "gpu"
x = torch.randn(3)
def move(t, where):
    return t.to(where)
x = move(x, device)
"""


@pytest.mark.parametrize(("code", "line"), [(DEVICE_INLINE, 4), (DEVICE_PASSED, 5)],
                         ids=["inline", "function"])
def test_an_op_on_parameters_is_not_a_call_that_hands_them_on(sandbox: Sandbox, code: str,
                                                              line: int) -> None:
    # t.to(where) is the op that fails, not a learner's module the values pass through
    got = first(sandbox, code)
    assert (got.id, got.line) == ("unknown-device-string", line)


LR_NAMED = """import torch
x = torch.linspace(0, 10, 50) * 10
y = 3 * x + 1
w = torch.zeros(1, requires_grad=True)
{name} = 0.01
for it in range(20):
    loss = ((w * x - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= {name} * w.grad
        w.grad.zero_()
    print(loss.item())
"""
LR_DEFAULT = """import torch
x = torch.linspace(0, 10, 50) * 10
y = 3 * x + 1
def fit(steps, alpha=0.01):
    w = torch.zeros(1, requires_grad=True)
    for it in range(steps):
        loss = ((w * x - y) ** 2).mean()
        loss.backward()
        with torch.no_grad():
            w -= alpha * w.grad
            w.grad.zero_()
        print(loss.item())
fit(20)
"""


@pytest.mark.parametrize(("code", "line"), [(LR_NAMED.format(name="lr"), 5),
                                            (LR_NAMED.format(name="step_size"), 5),
                                            (LR_DEFAULT, 4)],
                         ids=["lr", "other-name", "default"])
def test_the_learning_rate_is_found_whatever_its_name(sandbox: Sandbox, code: str,
                                                      line: int) -> None:
    # the step size is the factor of w.grad in the update, followed to the number
    got = first(sandbox, code)
    assert (got.id, got.root_line, got.fix_verified) == ("lr-too-high", line, True)

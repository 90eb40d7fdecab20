"""The training trace of the instrumented re-run (tutor/sandbox/training_trace.py), each
source on small programs of its own: the symptom recorded where it is, and nothing where the
program is right."""

from __future__ import annotations

from tutor.sandbox.models import Evidence

from .test_evidence import record

NET = """import torch
import torch.nn as nn
torch.manual_seed(0)
x = torch.randn(16, 4)
y = torch.randint(0, 3, (16,))
"""


def trace(code: str) -> Evidence:
    ev, raised = record(NET + code)
    assert raised is None, raised
    return ev


def test_a_log_of_zero_is_the_first_op_that_goes_non_finite() -> None:
    ev = trace("""w = torch.zeros(4, requires_grad=True)
p = torch.sigmoid(x @ w * 0) * (x[:, 0] > 0)
loss = -torch.log(p).mean()
loss.backward()
""")
    first = ev.training.nonfinite[0]
    assert (first.phase, first.line, first.op, first.value) == ("forward", 8, "log", "inf") or (
        first.phase, first.line, first.op, first.value) == ("forward", 8, "log", "-inf")
    assert first.operands[0].zeros and first.operands[0].low == 0.0


def test_a_square_root_of_zero_gives_a_nan_gradient_at_its_op() -> None:
    # the forward is finite (sqrt(0) = 0); the gradient of sqrt at 0 is inf, and the op
    # that made it is the one named, not the later ones it flows through
    ev = trace("""w = torch.ones(4, requires_grad=True)
g = (x @ w).clamp(min=0)
loss = torch.sqrt(g).mean()
loss.backward()
""")
    found = [n for n in ev.training.nonfinite if n.phase == "backward"]
    assert [(n.line, n.op) for n in found] == [(8, "sqrt")]
    assert found[0].operands[0].zeros
    assert not [n for n in ev.training.nonfinite if n.phase == "forward"]


def test_an_epsilon_under_the_root_leaves_nothing_non_finite() -> None:
    ev = trace("""w = torch.ones(4, requires_grad=True)
g = (x @ w).clamp(min=0)
loss = torch.sqrt(g + 1e-8).mean()
loss.backward()
""")
    assert ev.training.nonfinite == []


def test_a_loss_given_probabilities_names_the_softmax_layer_that_made_them() -> None:
    ev = trace("""model = nn.Sequential(nn.Linear(4, 3), nn.Softmax(dim=1))
loss = nn.CrossEntropyLoss()(model(x), y)
""")
    (given,) = ev.training.loss_inputs
    assert (given.loss, given.producer, given.producer_line) == ("cross_entropy", "softmax", 7)
    assert (given.producer_module, given.producer_kind) == ("model.1", "Softmax")
    assert given.sums_to_one is True and given.backward


def test_a_loss_given_scores_sees_scores() -> None:
    ev = trace("""model = nn.Linear(4, 3)
loss = nn.functional.cross_entropy(model(x), y)
""")
    (given,) = ev.training.loss_inputs
    assert given.producer == "linear" and given.sums_to_one is False


def test_each_step_says_how_far_it_moved_and_which_passes_fed_it() -> None:
    ev = trace("""model = nn.Linear(4, 3)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for i in range(8):
    opt.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    if i % 4 == 3:
        opt.step()
""")
    assert [(s.passes, s.passes_line, s.cleared) for s in ev.steps] == [(4, 10, 3), (4, 10, 3)]
    assert all(s.moved is not None and 1e-4 < s.moved < 1 for s in ev.steps)
    ev = trace("""model = nn.Linear(4, 3)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for i in range(8):
    nn.functional.cross_entropy(model(x), y).backward()
    if i % 4 == 3:
        opt.step()
        opt.zero_grad()
""")
    assert [(s.passes, s.cleared) for s in ev.steps] == [(4, 0), (4, 0)]


def test_a_tiny_learning_rate_barely_moves_the_parameters() -> None:
    ev = trace("""model = nn.Linear(4, 3)
opt = torch.optim.SGD(model.parameters(), lr=1e-9)
for _ in range(3):
    opt.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
""")
    assert all(s.moved is not None and s.moved < 1e-7 for s in ev.steps)


DROPOUT = """class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
    def forward(self, t):
        return nn.functional.dropout(self.fc(t), p=0.5{flag})
net = Net()
net.eval()
out = net(x)
"""


def test_a_functional_dropout_left_on_in_eval_mode_is_recorded() -> None:
    (drop,) = trace(DROPOUT.format(flag="")).training.dropouts
    assert (drop.line, drop.op, drop.module, drop.kind) == (11, "dropout", "net", "Net")
    assert trace(DROPOUT.format(flag=", training=self.training")).training.dropouts == []


RESIDUAL = """class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.ReLU({inplace}), nn.Linear(4, 4))
    def forward(self, t):
        out = self.body(t)
        return out + t
block = Block()
out = block(x.clone())
"""


def test_a_layer_that_changes_its_input_in_place_before_a_skip_reads_it() -> None:
    (changed,) = trace(RESIDUAL.format(inplace="inplace=True")).training.changed_inputs
    assert (changed.line, changed.module, changed.read_line, changed.name) == (
        11, "self.body", 12, "t")
    assert (changed.inner, changed.inner_kind) == ("block.body.0", "ReLU")
    assert trace(RESIDUAL.format(inplace="")).training.changed_inputs == []


def test_an_inplace_activation_on_a_layers_own_output_is_not_a_changed_input() -> None:
    ev = trace("""model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(inplace=True), nn.Linear(8, 3))
out = model(x) + 1
""")
    assert ev.training.changed_inputs == []


NORM = """class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(4, 4)
        self.bn = nn.BatchNorm1d(4)
    def forward(self, t, u):
        return {body}
net = Net()
out = net(x, x.flip(0))
"""


def test_one_batchnorm_at_two_stages_of_a_forward_is_shared() -> None:
    ev = trace(NORM.format(body="self.bn(self.b(self.bn(self.a(t))))"))
    (shared,) = ev.training.shared_norms
    assert (shared.module, shared.kind, shared.lines) == ("net.bn", "BatchNorm1d", [13, 13])


def test_one_batchnorm_on_two_parallel_inputs_is_not_shared_across_stages() -> None:
    # a siamese use: both inputs at the same stage, neither computed from the other
    ev = trace(NORM.format(body="self.bn(self.a(t)) + self.bn(self.a(u))"))
    assert ev.training.shared_norms == []


FREEZE = """model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
for p in model[0].parameters():
    p.requires_grad = False
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(4):
    if epoch == {when}:
        for p in model.parameters():
            p.requires_grad = True
    opt.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
"""


def test_a_freeze_undone_before_any_step_is_recorded() -> None:
    (undone,) = trace(FREEZE.format(when=0)).training.unfrozen
    assert (undone.line, undone.frozen_line, undone.count) == (13, 8, 2)
    assert undone.params == ["model.0.weight", "model.0.bias"]


def test_unfreezing_after_some_steps_is_gradual_unfreezing_not_a_mistake() -> None:
    assert trace(FREEZE.format(when=2)).training.unfrozen == []


def test_parameters_say_whether_their_rows_start_and_stay_identical() -> None:
    ev = trace("""model = nn.Sequential(nn.Linear(4, 6), nn.Sigmoid(), nn.Linear(6, 3))
for layer in (model[0], model[2]):
    nn.init.zeros_(layer.weight)
    nn.init.zeros_(layer.bias)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(5):
    opt.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
""")
    by_name = {p.name: p for p in ev.params}
    hidden, out = by_name["model.0.weight"], by_name["model.2.weight"]
    assert (hidden.rows_same_start, hidden.rows_same_end, hidden.init_line) == (True, True, 8)
    assert (out.rows_same_start, out.rows_same_end) == (True, False)


def test_a_tensor_attribute_that_is_not_a_parameter_is_marked_unregistered() -> None:
    ev = trace("""class Scale(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(4))
        self.s = torch.ones(4, requires_grad=True)
    def forward(self, t):
        return t * self.w * self.s
m = Scale()
opt = torch.optim.SGD(m.parameters(), lr=0.1)
m(x).sum().backward()
opt.step()
""")
    by_name = {p.name: p for p in ev.params}
    assert by_name["m.s"].unregistered and by_name["m.s"].reached
    assert not by_name["m.s"].in_optimizer
    assert not by_name["m.w"].unregistered


def test_module_calls_say_which_forwards_were_trained_on() -> None:
    ev = trace("""model = nn.Sequential(nn.Linear(4, 3), nn.Dropout(0.5))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    opt.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
with torch.no_grad():
    model(x)
""")
    trained = {(m.line, m.grad_enabled): m.backward for m in ev.modules}
    assert trained == {(10, True): 3, (13, False): 0}


def test_with_default_initialization_no_rows_are_identical() -> None:
    ev = trace("""model = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 3))
nn.functional.cross_entropy(model(x), y).backward()
""")
    assert not any(p.rows_same_start or p.rows_same_end for p in ev.params)


def test_a_softmax_over_a_dimension_of_size_one_is_recorded() -> None:
    ev = trace("""scores = x[:1] @ x[1:6].T
flat = torch.softmax(scores, dim=0)
spread = torch.softmax(scores, dim=1)
""")
    (flat,) = ev.training.flat_softmaxes
    assert (flat.line, flat.op, flat.dim, flat.shape) == (7, "softmax", 0, [1, 5])


def test_values_too_large_to_sum_are_still_finite_and_one_nan_among_many_is_found() -> None:
    # the trace tests a tensor by its sum first: a sum that overflows is not a non-finite
    # value, and a single nan in a large tensor makes the op the first to go non-finite
    ev = trace("""big = torch.full((1000, 100), 1e8)
huge = big * 3e30
w = torch.ones(1000, 100, requires_grad=True)
h = w * torch.arange(100000.0).reshape(1000, 100)
r = torch.sqrt(h - 1.0)
""")
    assert [(n.line, n.op, n.value) for n in ev.training.nonfinite] == [(10, "sqrt", "nan")]
    assert not ev.truncated  # (nothing about line 7 went wrong in the recorder either)

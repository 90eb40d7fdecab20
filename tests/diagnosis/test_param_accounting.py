"""Parameter accounting in the instrumented re-run (tutor/sandbox/param_accounting.py) and the
target facts the training trace records for losses that compare values, each on small programs
of its own: the fact recorded where the program shows it, and nothing where it is right."""

from __future__ import annotations

from tutor.sandbox.models import Evidence

from .test_evidence import record

NET = """import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
x = torch.randn(16, 4)
y = torch.randn(16, 1)
"""


def trace(code: str) -> Evidence:
    ev, raised = record(NET + code)
    assert raised is None, raised
    return ev


def test_layers_in_a_plain_list_are_watched_under_the_attribute_that_holds_them() -> None:
    ev = trace("""class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = [nn.Linear(4, 4), nn.Linear(4, 1)]
    def forward(self, t):
        for b in self.blocks:
            t = b(t)
        return t
net = Net()
F.mse_loss(net(x), y).backward()
""")
    held = [p for p in ev.params if p.held_in]
    assert {p.name for p in held} == {f"net.blocks[{i}].{w}" for i in (0, 1)
                                      for w in ("weight", "bias")}
    assert all(p.held_in == "blocks" and p.container == "list" and p.reached for p in held)


def test_a_private_plain_list_of_a_submodule_is_looked_into() -> None:
    """``self._layers = []`` filled by append, in a submodule: a leading underscore is the
    learner's naming, not the Module's bookkeeping (those attributes are still skipped)."""
    ev = trace("""class Merge(nn.Module):
    def __init__(self, layers):
        super().__init__()
        self._layers = []
        for layer in layers:
            self._layers.append(layer)
    def forward(self, t):
        return sum(layer(t) for layer in self._layers)
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.merge = Merge([nn.Linear(4, 1), nn.Linear(4, 1)])
    def forward(self, t):
        return self.merge(t)
net = Net()
F.mse_loss(net(x), y).backward()
""")
    held = [p for p in ev.params if p.held_in]
    assert {p.name for p in held} == {f"net.merge._layers[{i}].{w}" for i in (0, 1)
                                      for w in ("weight", "bias")}
    assert all(p.held_in == "merge._layers" and p.container == "list" for p in held)


def test_a_module_list_holds_nothing_outside_parameters() -> None:
    ev = trace("""net = nn.Sequential(nn.ModuleList([nn.Linear(4, 4)]))
net[0][0](x).sum().backward()
""")
    assert not any(p.held_in for p in ev.params)


def test_a_layer_built_inside_forward_is_recorded_once_per_call() -> None:
    ev = trace("""class Net(nn.Module):
    def forward(self, t):
        return nn.Linear(4, 1)(t)
net = Net()
for _ in range(3):
    net(x)
""")
    (built,) = ev.accounting.built_in_forward
    assert (built.line, built.module, built.made, built.count) == (9, "net", "Linear", 6)
    assert not built.in_optimizer


def test_a_layer_built_in_init_is_not_built_in_forward() -> None:
    ev = trace("""class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)
    def forward(self, t):
        return self.fc(t)
net = Net()
net(x)
net(x)
""")
    assert ev.accounting.built_in_forward == []


def test_requires_grad_on_a_module_and_a_misspelt_flag_are_recorded() -> None:
    ev = trace("""net = nn.Sequential(nn.Linear(4, 4), nn.Linear(4, 1))
net[0].requires_grad = False
for p in net[1].parameters():
    p.require_grad = False
net(x).sum().backward()
""")
    flags = {(f.on, f.attr, f.value) for f in ev.accounting.module_flags}
    assert flags == {("module", "requires_grad", "False"), ("parameter", "require_grad", "False")}
    on_module = next(f for f in ev.accounting.module_flags if f.on == "module")
    assert on_module.kind == "Linear" and on_module.params == ["net.0.weight", "net.0.bias"]


def test_a_copy_onto_itself_and_one_module_under_two_names_are_recorded() -> None:
    ev = trace("""online = nn.Linear(4, 1)
target = online
target.load_state_dict(online.state_dict())
opt = torch.optim.SGD(online.parameters(), lr=0.1)
F.mse_loss(online(x), target(x).detach()).backward()
opt.step()
""")
    (copied,) = ev.accounting.self_copies
    assert (copied.line, copied.count) == (9, 2)
    (alias,) = ev.accounting.aliases
    assert (alias.names, alias.kind, alias.trained) == (["online", "target"], "Linear", True)


def test_a_value_computed_from_the_destination_alone_counts_as_a_copy_onto_itself() -> None:
    ev = trace("""import copy
online = nn.Linear(4, 1)
target = copy.deepcopy(online)
with torch.no_grad():
    for t, o in zip(target.parameters(), online.parameters()):
        t.copy_(0.9 * t + 0.1 * t)
    for t, o in zip(target.parameters(), online.parameters()):
        t.copy_(0.9 * t + 0.1 * o)
""")
    assert [(c.line, c.count) for c in ev.accounting.self_copies] == [(12, 2)]


def test_a_deep_copy_is_neither_an_alias_nor_a_copy_onto_itself() -> None:
    ev = trace("""import copy
online = nn.Linear(4, 1)
target = copy.deepcopy(online)
target.load_state_dict(online.state_dict())
opt = torch.optim.SGD(online.parameters(), lr=0.1)
F.mse_loss(online(x), target(x).detach()).backward()
opt.step()
""")
    assert ev.accounting.self_copies == [] and ev.accounting.aliases == []


def test_a_regression_loss_records_what_its_output_activation_cannot_reach() -> None:
    ev = trace("""net = nn.Sequential(nn.Linear(4, 1), nn.ReLU())
loss = F.mse_loss(net(x), y)
loss.backward()
""")
    (given,) = ev.training.loss_inputs
    assert (given.loss, given.producer, given.producer_kind) == ("mse_loss", "relu", "ReLU")
    assert given.target_low is not None and given.target_low < 0
    # about half of y is below 0, which a ReLU output cannot reach
    assert given.outside is not None and 0.2 < given.outside < 0.8


def test_a_hand_written_difference_with_the_model_output_is_a_loss_input() -> None:
    ev = trace("""net = nn.Sequential(nn.Linear(4, 1), nn.Sigmoid())
loss = ((y * 10 - net(x)) ** 2).mean()
loss.backward()
""")
    (given,) = ev.training.loss_inputs
    assert (given.loss, given.producer, given.line) == ("sub", "sigmoid", 8)
    assert given.outside is not None and given.outside > 0.5


def test_targets_cast_to_integers_with_fractions_are_marked_truncated() -> None:
    ev = trace("""net = nn.Linear(4, 1)
F.mse_loss(net(x), torch.rand(16, 1).long()).backward()
F.mse_loss(net(x), torch.ones(16, 1).long()).backward()
""")
    cut, whole = ev.training.loss_inputs
    assert (cut.target_cast, cut.target_cast_line) == ("long", 8)
    assert whole.target_cast is None


def test_a_backward_after_the_step_is_discarded_by_the_next_zero_grad() -> None:
    ev = trace("""net = nn.Linear(4, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for _ in range(3):
    opt.zero_grad()
    net(x).sum().backward()
    opt.step()
    net(x).mean().backward()
""")
    assert [s.discarded for s in ev.steps] == [[], [13], [13]]


def test_the_mean_of_an_empty_selection_is_an_empty_operand() -> None:
    ev = trace("""w = torch.ones(4, requires_grad=True)
loss = (x @ w)[x[:, 0] > 99].mean()
""")
    (first,) = ev.training.nonfinite
    assert (first.op, first.line, first.operands[0].empty) == ("mean", 8, True)


def test_a_list_of_references_to_registered_layers_holds_nothing_outside_parameters() -> None:
    ev = trace("""class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(4, 1)
        self.order = [self.a, self.b]
    def forward(self, t):
        for layer in self.order:
            t = layer(t)
        return t
net = Net()
net(x).sum().backward()
""")
    assert not any(p.held_in for p in ev.params)

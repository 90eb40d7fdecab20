"""Each evidence source of the instrumented re-run, on small programs of its own."""

from __future__ import annotations

import contextlib
import io
from typing import Any

import pytest
import torch

from tutor.sandbox import evidence
from tutor.sandbox.models import Evidence

LEARNER = "<learner>"


def record(code: str) -> tuple[Evidence, BaseException | None]:
    namespace: dict[str, Any] = {"__name__": "__main__"}
    torch.manual_seed(0)
    recorder = evidence.start(torch, LEARNER)
    raised = None
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(code, LEARNER, "exec"), namespace)
    except Exception as exc:  # the program's own error is part of the evidence
        raised = exc
    return Evidence.model_validate(recorder.finish(namespace)), raised


def test_provenance_traces_a_tensor_back_to_the_op_that_cut_its_graph() -> None:
    ev, raised = record(
        "import torch\n"
        "w = torch.ones(3, requires_grad=True)\n"
        "h = (w * 2).detach()\n"
        "y = (h + 1).sum()\n"
        "y.backward()\n")
    assert isinstance(raised, RuntimeError)
    back = ev.backwards[0]
    assert back.line == 5 and back.raised == "RuntimeError" and back.requires_grad is False
    assert back.chain[-1].line == 3 and back.chain[-1].op == "detach"


def test_data_and_no_grad_cuts_are_named_with_their_line() -> None:
    ev, _ = record(
        "import torch\n"
        "w = torch.ones(2, requires_grad=True)\n"
        "a = w.data * 3\n"
        "with torch.no_grad():\n"
        "    b = w * 2\n")
    kinds = {(o.kind, o.line) for o in ev.ops}
    assert ("data", 3) in kinds
    assert any(o.kind == "cut" and o.line == 5 and o.detail == "no_grad" for o in ev.ops)


def test_in_place_change_of_a_saved_tensor_names_the_op_that_made_it() -> None:
    ev, raised = record(
        "import torch\n"
        "x = torch.rand(3, requires_grad=True)\n"
        "y = x.sigmoid()\n"
        "y.mul_(2)\n"
        "y.sum().backward()\n")
    assert isinstance(raised, RuntimeError)
    op = next(o for o in ev.ops if o.kind == "inplace")
    assert (op.line, op.op, op.grad_fn, op.name) == (4, "mul_", "SigmoidBackward0", "y")


def test_requires_grad_set_after_use_records_the_first_use() -> None:
    ev, _ = record(
        "import torch\n"
        "a = torch.ones(2)\n"
        "b = a * 3\n"
        "a.requires_grad_()\n")
    op = next(o for o in ev.ops if o.kind == "requires_grad")
    assert (op.line, op.first_use, op.name) == (4, 3, "a")


def test_training_dynamics_losses_params_and_optimizer() -> None:
    ev, raised = record(
        "import torch\n"
        "import torch.nn as nn\n"
        "used = nn.Linear(2, 1)\n"
        "other = nn.Linear(2, 1)\n"
        "opt = torch.optim.SGD(other.parameters(), lr=0.1)\n"
        "x = torch.ones(4, 2)\n"
        "for _ in range(3):\n"
        "    opt.zero_grad()\n"
        "    loss = used(x).pow(2).mean()\n"
        "    loss.backward()\n"
        "    opt.step()\n")
    assert raised is None
    assert len(ev.backwards) == 3 and all(isinstance(b.loss, float) for b in ev.backwards)
    assert ev.steps[0].line == 11 and ev.steps[0].n_params == 2
    params = {p.name: p for p in ev.params}
    assert params["used.weight"].reached and not params["used.weight"].in_optimizer
    assert not params["used.weight"].changed
    assert params["other.weight"].in_optimizer and not params["other.weight"].reached


def test_module_calls_record_train_mode_dropout_and_grad_mode() -> None:
    ev, _ = record(
        "import torch\n"
        "import torch.nn as nn\n"
        "net = nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.5))\n"
        "with torch.no_grad():\n"
        "    net(torch.ones(1, 2))\n"
        "net.eval()\n"
        "net(torch.ones(1, 2))\n")
    first, second = ev.modules
    assert (first.line, first.training, first.grad_enabled, first.dropout) == (5, True, False,
                                                                               True)
    assert (second.line, second.training) == (7, False)


def test_a_grad_left_none_after_backward_is_reported() -> None:
    ev, _ = record(
        "import torch\n"
        "a = torch.ones(2, requires_grad=True)\n"
        "b = torch.ones(2, requires_grad=True)\n"
        "(a * 2).sum().backward()\n")
    params = {p.name: p for p in ev.params}
    assert params["a"].grad_none is False and params["b"].grad_none is True
    assert ev.backwards[0].reached == ["a"]


def test_the_sandbox_collects_evidence_only_when_asked(sandbox: Any) -> None:
    code = "import torch\nx = torch.ones(2, requires_grad=True)\n(x * 3).sum().backward()\n"
    assert sandbox.run(code).evidence is None
    ev = sandbox.run(code, instrument=True).evidence
    assert ev is not None and ev.backwards[0].line == 3 and ev.backwards[0].loss == 6.0


def test_evidence_is_validated_as_data() -> None:
    with pytest.raises(ValueError):
        Evidence.model_validate({"ops": [{"line": 1, "kind": "exec", "op": "x"}]})
    with pytest.raises(ValueError):
        Evidence.model_validate({"backwards": [{"line": 1, "loss": "rm -rf"}]})


def test_the_recorder_never_changes_what_the_program_does() -> None:
    # reading the grad_fn of a no_grad view whose base changed in place raises: the recorder
    # must not (the program itself is fine)
    ev, raised = record(
        "import torch\n"
        "import torch.nn as nn\n"
        "layer = nn.Linear(6, 4)\n"
        "with torch.no_grad():\n"
        "    layer.weight[:, 2] -= torch.ones(4)\n")
    assert raised is None
    assert any(o.kind == "inplace" and o.line == 5 for o in ev.ops)


def test_the_op_that_raised_names_its_operands_and_where_each_was_made() -> None:
    ev, raised = record(
        "import numpy as np\n"
        "import torch\n"
        "import torch.nn as nn\n"
        "weight = torch.tensor(1.0 / np.array([1, 2, 4]))\n"
        "loss_fn = nn.CrossEntropyLoss(weight=weight)\n"
        "logits = torch.randn(2, 3)\n"
        "loss_fn(logits, torch.tensor([0, 2]))\n")
    assert isinstance(raised, RuntimeError)
    failed = ev.failed
    assert failed is not None and failed.line == 7 and failed.op == "cross_entropy"
    assert failed.module == "loss_fn" and failed.module_kind == "CrossEntropyLoss"
    made = {o.dtype: o.line for o in failed.inputs}
    assert made == {"torch.float32": 6, "torch.int64": 7, "torch.float64": 4}


def test_an_in_place_change_names_what_made_and_used_the_tensor_and_its_module() -> None:
    ev, raised = record(
        "import torch\n"
        "import torch.nn as nn\n"
        "act = nn.ReLU(inplace=True)\n"
        "x = torch.rand(3, requires_grad=True)\n"
        "y = x.exp()\n"
        "z = y.sum()\n"
        "w = act(y)\n"
        "(z + w.sum()).backward()\n")
    assert isinstance(raised, RuntimeError)
    op = next(o for o in ev.ops if o.kind == "inplace")
    assert (op.line, op.module, op.module_kind) == (7, "act", "ReLU")
    assert (op.grad_fn, op.grad_fn_after) == ("ExpBackward0", "ReluBackward0")
    assert (op.made_line, op.used_line) == (5, 6)


def test_a_backward_into_gradients_nothing_cleared_is_counted() -> None:
    ev, _ = record(
        "import torch\n"
        "w = torch.ones(2, requires_grad=True)\n"
        "for _ in range(3):\n"
        "    (w * 2).sum().backward()\n")
    assert [b.accumulated for b in ev.backwards] == [0, 1, 1]


def test_a_long_loop_is_sampled_but_every_loss_is_kept() -> None:
    ev, _ = record(
        "import torch\n"
        "w = torch.ones(2, requires_grad=True)\n"
        "for i in range(200):\n"
        "    loss = (w * i).sum()\n"
        "    loss.backward()\n"
        "    w.grad = None\n"
        "y = (w * 3).detach()\n")
    assert len(ev.backwards) == 200 and ev.backwards[-1].loss == 398.0
    assert sum(1 for b in ev.backwards if b.reached) <= evidence.FULL_PER_OP
    assert any(o.kind == "cut" and o.line == 7 for o in ev.ops)  # after the loop: recorded


LEARNER_MODE_AROUND_STEP = """import torch
from torch.overrides import TorchFunctionMode

class Count(TorchFunctionMode):
    calls = 0
    def __torch_function__(self, func, types, args=(), kwargs=None):
        Count.calls += 1
        return func(*args, **(kwargs or {}))

w = torch.nn.Parameter(torch.ones(3))
opt = torch.optim.Adam([w], lr=0.1)
for i in range(3):
    loss = (w * 2).sum()
    opt.zero_grad()
    loss.backward()
    with torch.device("cpu"):
        opt.step()
    with Count():
        opt.step()
    y = (w * 3).detach()
"""


def test_the_recording_stands_aside_during_a_step_but_not_from_a_learners_own_mode() -> None:
    plain: dict[str, Any] = {"__name__": "__main__"}
    exec(compile(LEARNER_MODE_AROUND_STEP, LEARNER, "exec"), plain)
    namespace: dict[str, Any] = {"__name__": "__main__"}
    recorder = evidence.start(torch, LEARNER)
    exec(compile(LEARNER_MODE_AROUND_STEP, LEARNER, "exec"), namespace)
    ev = Evidence.model_validate(recorder.finish(namespace))
    # the learner's own mode stayed on for its steps: it saw every op it sees without the
    # recording (and the recorder's own bookkeeping at a step, as it always did)
    assert namespace["Count"].calls >= plain["Count"].calls > 0
    # the recording went on after each step (a step inside a device context included)
    assert len(ev.steps) == 6 and not ev.truncated
    assert [b.loss for b in ev.backwards] == [6.0, pytest.approx(4.8), pytest.approx(3.6)]
    assert [o.line for o in ev.ops if o.kind == "cut"] == [20]
    kept = len(recorder.records)
    torch.ones(2, requires_grad=True) * 2  # after the end nothing reaches the recorder
    assert len(recorder.records) == kept

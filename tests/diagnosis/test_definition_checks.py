"""What a learner's class defines against what torch calls: a ``forward`` torch cannot find
(indented into ``__init__``, misspelled), and an initialiser looped over every tensor of a
model. Programs of our own; each change is tried before it is given."""

from __future__ import annotations

from typing import Any

from tutor.diagnosis.reasoning import diagnose

from .runs import first_for_error

NESTED = """import torch
import torch.nn as nn
class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 2)

        def forward(self, x):
            h = self.proj(x)
            return h.relu()
model = Tagger()
out = model(torch.randn(3, 4))
print(out.shape)
"""

MISSPELLED = """import torch
import torch.nn as nn
class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)
    def foward(self, x):
        return self.fc(x)
print(Scorer()(torch.randn(2, 4)).shape)
"""

UNRELATED = MISSPELLED.replace("def foward(", "def predict(")

INIT_LOOP = """import torch.nn as nn
net = nn.Sequential(nn.Linear(4, 8), nn.LayerNorm(8), nn.Linear(8, 1))
for name, p in net.named_parameters():
    nn.init.xavier_uniform_(p)
print(sum(p.numel() for p in net.parameters()))
"""



def test_forward_indented_into_init_is_moved_out(sandbox: Any) -> None:
    first = first_for_error(sandbox, NESTED)
    assert (first.id, first.root_line, first.fix_verified) == ("forward-not-found", 8, True)
    assert "lines 8-10" in first.fix.en and "`__init__`" in first.fix.en
    assert any("inside `__init__`" in step.en for step in first.chain)
    assert "def forward(self, x):\n        h = self.proj(x)" in (first.patch or "").replace(
        "+", "")


def test_a_misspelled_forward_is_renamed(sandbox: Any) -> None:
    first = first_for_error(sandbox, MISSPELLED)
    assert (first.id, first.root_line, first.fix_verified) == ("forward-not-found", 7, True)
    assert "name the method `forward`" in first.fix.en
    assert any("`foward`" in step.en for step in first.chain)


def test_a_method_of_another_name_is_not_taken_for_forward(sandbox: Any) -> None:
    result = sandbox.run(UNRELATED)
    assert all(d.id != "forward-not-found" for d in diagnose(UNRELATED, result, sandbox))


def test_an_initialiser_looped_over_all_tensors_is_kept_to_matrices(sandbox: Any) -> None:
    first = first_for_error(sandbox, INIT_LOOP)
    assert (first.id, first.root_line, first.fix_verified) == ("init-on-vector", 4, True)
    assert "`if p.dim() > 1: ...`" in first.fix.en
    assert "`p`" in first.title.en and "一维" in first.title.zh


SCALED = """import torch
class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, factor, x):
        ctx.factor = factor
        return x * factor
    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.factor
w = torch.randn(3, requires_grad=True)
Scale.apply(2.0, w).sum().backward()
print(w.grad)
"""

SILENT_BACKWARD = """import torch
class Mul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b
    @staticmethod
    def backward(ctx, out):
        a, b = ctx.saved_tensors
        grad_a = out * b
        grad_b = out * a
a = torch.randn(2, requires_grad=True)
b = torch.randn(2, requires_grad=True)
Mul.apply(a, b).sum().backward()
print(a.grad, b.grad)
"""


def test_a_backward_short_of_gradients_gets_its_none_in_the_right_place(sandbox: Any) -> None:
    """The flag comes first: a None after the gradient would run too, but hand the gradient
    to the flag and leave `w` without one; the check's expectation refuses that."""
    first = first_for_error(sandbox, SCALED)
    assert (first.id, first.root_line, first.fix_verified) == ("backward-count", 9, True)
    assert "`return None, grad * ctx.factor`" in first.fix.en
    assert "`factor`, `x`" in first.explanation.en


def test_a_backward_that_returns_nothing_returns_what_it_computed(sandbox: Any) -> None:
    first = first_for_error(sandbox, SILENT_BACKWARD)
    assert (first.id, first.fix_verified) == ("backward-count", True)
    assert "`return grad_a, grad_b`" in first.fix.en


GRU_TIME_MAJOR = """import torch
import torch.nn as nn
class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(3, 8)
        self.out = nn.Linear(8, 2)
    def forward(self, x):
        states, _ = self.gru(x)
        return self.out(states[:, -1])
torch.manual_seed(0)
model = Tagger().eval()
batch = torch.randn(6, 5, 3)
with torch.no_grad():
    together = model(batch)[3]
    alone = model(batch[3:4])[0]
print("sample 3 in a batch vs alone:", round((together - alone).abs().max().item(), 4))
"""


def test_a_recurrent_layer_read_batch_first_is_built_batch_first(sandbox: Any) -> None:
    result = sandbox.run(GRU_TIME_MAJOR)
    assert result.outcome == "ok" and "alone: 0.0\n" not in result.stdout
    first = diagnose(GRU_TIME_MAJOR, result, sandbox)[0]
    assert (first.id, first.root_line, first.fix_verified) == ("rnn-batch-first", 6, True)
    assert "`nn.GRU(3, 8, batch_first=True)`" in first.fix.en
    assert any("`states[:, -1]`" in step.en for step in first.chain)


def test_a_recurrent_layer_used_as_built_is_not_diagnosed(sandbox: Any) -> None:
    built_right = GRU_TIME_MAJOR.replace("nn.GRU(3, 8)", "nn.GRU(3, 8, batch_first=True)")
    time_major = GRU_TIME_MAJOR.replace("states[:, -1]", "states[-1]").replace(
        "model(batch)[3]", "model(batch.transpose(0, 1))[3]").replace(
        "model(batch[3:4])[0]", "model(batch[3:4].transpose(0, 1))[0]")
    for code in (built_right, time_major):
        result = sandbox.run(code)
        assert result.outcome == "ok" and "alone: 0.0\n" in result.stdout, result.stdout
        assert all(d.id != "rnn-batch-first" for d in diagnose(code, result, sandbox))


ROUNDED = """import torch
class RoundTo(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, step):
        return torch.round(x / step) * step
w = torch.randn(4, requires_grad=True)
loss = (RoundTo.apply(w, 0.5) * w).sum()
loss.backward()
print(w.grad)
"""

SCALED_BY_INT = """import torch
class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, k):
        ctx.save_for_backward(x, k)
        return x * k
    @staticmethod
    def backward(ctx, grad):
        x, k = ctx.saved_tensors
        return grad * k, None
w = torch.ones(3, requires_grad=True)
Scale.apply(w, 3).sum().backward()
print(w.grad)
"""


def test_a_function_without_backward_gets_one_that_passes_no_gradient(sandbox: Any) -> None:
    first = first_for_error(sandbox, ROUNDED)
    assert (first.id, first.root_line, first.fix_verified) == (
        "function-without-backward", 2, True)
    assert "`return None, None`" in first.fix.en
    assert "def backward(ctx, *grad_outputs):" in (first.patch or "")


def test_a_number_given_to_save_for_backward_is_kept_on_ctx(sandbox: Any) -> None:
    first = first_for_error(sandbox, SCALED_BY_INT)
    assert (first.id, first.root_line, first.fix_verified) == ("saved-non-tensor", 5, True)
    assert "`ctx.k = k`" in first.fix.en
    patch = first.patch or ""
    assert "ctx.save_for_backward(x)" in patch and "k = ctx.k" in patch

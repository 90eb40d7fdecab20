"""A fix is shown only when its trial shows the behaviour the program meant, not merely the
error gone: each mechanism on small programs of its own (a fix accepted; a fix that hides
the bug refused, and what the learner is told instead)."""

from __future__ import annotations

from typing import Any

from tutor.diagnosis import checks
from tutor.diagnosis.models import Diagnosis
from tutor.diagnosis.reasoning import diagnose
from tutor.diagnosis.verify import hides_bug, prints_the_same
from tutor.sandbox.models import (
    CutEvidence,
    Evidence,
    ParamEvidence,
    RunResult,
    StepEvidence,
    WarningInfo,
)

from .runs import verified_diagnosis


def first_diagnosis(sandbox: Any, code: str) -> Diagnosis:
    debug, checks.DEBUG = checks.DEBUG, True
    try:
        return diagnose(code, sandbox.run(code), sandbox)[0]
    finally:
        checks.DEBUG = debug


def shown_text(diagnosis: Diagnosis) -> str:
    """Everything a learner reads of it, in both languages."""
    parts = [diagnosis.title, diagnosis.explanation, diagnosis.fix, *diagnosis.chain]
    return "\n".join(f"{t.en}\n{t.zh}" for t in parts) + (diagnosis.patch or "")


# -- the general refusal, on evidence alone ------------------------------------------------
def _param(name: str, forward_change: int | None = None) -> ParamEvidence:
    return ParamEvidence(name=name, requires_grad=True, grad_none=False, in_optimizer=True,
                         reached=True, forward_change=forward_change)


def _run(*params: ParamEvidence, steps: list[StepEvidence] | None = None,
         warnings: list[WarningInfo] | None = None, outcome: str = "ok") -> RunResult:
    return RunResult.model_validate({
        "outcome": outcome, "device": "cpu", "warnings": warnings or [],
        "evidence": Evidence(params=list(params), steps=steps or [])})


def test_hides_bug_names_what_the_fixed_run_did_that_the_original_did_not() -> None:
    before = _run(_param("net.w"), outcome="error")
    assert hides_bug(before, _run(_param("net.w"))) is None
    overwritten = hides_bug(before, _run(_param("net.w", forward_change=7)))
    assert overwritten is not None and "line 7" in overwritten.en and "`net.w`" in overwritten.zh
    # a forward pass the learner wrote to change the weights did so before the fix too
    assert hides_bug(_run(_param("net.w", forward_change=7)),
                     _run(_param("net.w", forward_change=7))) is None
    broadcast = WarningInfo(category="UserWarning", message="Using a target size "
                            "(torch.Size([4, 2])) that is different to the input size")
    assert hides_bug(before, _run(_param("net.w"), warnings=[broadcast])) is not None
    idle = StepEvidence(optimizer="opt_g", kind="Adam", n_params=2, grads_none=2,
                        after_backward=1)
    said = hides_bug(before, _run(_param("net.w"), steps=[idle]))
    assert said is not None and "`opt_g`" in said.en
    stepping = idle.model_copy(update={"grads_none": 0})
    assert hides_bug(before, _run(_param("net.w"), steps=[stepping])) is None


# -- in place on a parameter ---------------------------------------------------------------
INPLACE_LAYER_ON_PARAM = """import torch
import torch.nn as nn

class Gate(nn.Module):
    def __init__(self):
        super().__init__()
        self.mix = nn.Parameter(torch.tensor([0.5, -0.2, 1.0]))
        self.clip = nn.Hardtanh(0.0, 1.0, inplace=True)

    def forward(self, a):
        w = self.clip(self.mix)
        return (w * a).sum()

gate = Gate()
gate(torch.randn(3)).backward()
print(gate.mix.grad)
"""


def test_no_grad_that_lets_a_forward_pass_overwrite_a_parameter_is_refused(
        sandbox: Any) -> None:
    # no_grad around line 11 runs, but clamps `mix` itself at every call and passes no
    # gradient through the clamp: the layer built in place is the cause
    first = verified_diagnosis(sandbox, INPLACE_LAYER_ON_PARAM, {"leaf-inplace"}, 11,
                               "inplace=False")
    assert "no_grad" not in (first.patch or "")
    assert any("line 8" in step.en for step in first.chain)


def test_an_inplace_function_whose_result_is_used_becomes_the_out_of_place_one(
        sandbox: Any) -> None:
    code = """import torch

w = torch.tensor([0.3, -1.2, 2.0], requires_grad=True)
scale = torch.sigmoid_(w)
loss = (scale * 4).sum()
loss.backward()
print(w.grad)
"""
    first = verified_diagnosis(sandbox, code, {"leaf-inplace"}, 4, "torch.sigmoid(w)")
    assert "no_grad" not in (first.patch or "")


def test_a_function_told_inplace_whose_result_is_used_is_told_otherwise(sandbox: Any) -> None:
    # corpus15 relu-inplace-on-leaf-input, after its scoring: no_grad around the ReLU ran,
    # and dropped its gradient (judged wrong)
    code = """import torch
import torch.nn.functional as F

x = torch.randn(2, 3, requires_grad=True)
y = F.relu(x, inplace=True)
y = F.dropout(y, p=0.0, inplace=True)
y.sum().backward()
print(x.grad)
"""
    first = verified_diagnosis(sandbox, code, {"leaf-inplace"}, 5, "F.relu(x, inplace=False)")
    assert "no_grad" not in (first.patch or "")


def test_a_deliberate_change_of_weights_is_wrapped_whole(sandbox: Any) -> None:
    code = """import torch
import torch.nn as nn

lin = nn.Linear(2, 2, bias=False)
lin.weight[0, 0] = 1.0
lin.weight[0, 1] = 0.0
lin.weight[1, 0] = 0.0
lin.weight[1, 1] = 1.0
print(lin(torch.ones(1, 2)))
"""
    first = verified_diagnosis(sandbox, code, {"leaf-view-inplace"}, 5, "with torch.no_grad():")
    assert "lines 5-8" in first.fix.en and "第 5-8 行" in first.fix.zh


# -- retain_graph=True where the graph should not be reused --------------------------------
GAN_TWO_D_LOSSES = """import torch
import torch.nn as nn

gen = nn.Linear(4, 6)
critic = nn.Sequential(nn.Linear(6, 1), nn.Sigmoid())
bce = nn.BCELoss()
opt_c = torch.optim.SGD(critic.parameters(), lr=0.1)
opt_g = torch.optim.SGD(gen.parameters(), lr=0.1)
for it in range(2):
    opt_c.zero_grad()
    real_loss = bce(critic(torch.randn(5, 6)), torch.ones(5, 1))
    real_loss.backward()
    made = gen(torch.randn(5, 4))
    made_loss = bce(critic(made), torch.zeros(5, 1))
    made_loss.backward()
    opt_c.step()
    opt_g.zero_grad()
    g_loss = bce(critic(made), torch.ones(5, 1))
    g_loss.backward()
    opt_g.step()
"""


def test_a_critic_step_on_the_generators_output_detaches_it(sandbox: Any) -> None:
    # two critic losses before the critic's step: the one that freed the shared graph is
    # the second; it reaches the generator, which the critic's optimizer does not hold
    first = verified_diagnosis(sandbox, GAN_TWO_D_LOSSES, {"backward-twice"}, 14,
                               "critic(made.detach())")
    assert "retain_graph" not in shown_text(first)


STATE_ON_A_MODULE = """import torch
import torch.nn as nn

class Accumulator(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.trace = None

    def forward(self, x):
        if self.trace is None:
            self.trace = torch.zeros_like(x)
        self.trace = 0.5 * self.trace + self.lin(x)
        return self.trace

acc = Accumulator()
opt = torch.optim.SGD(acc.parameters(), lr=0.01)
for batch in range(3):
    out = acc(torch.randn(2, 3))
    loss = out.pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


def test_a_state_kept_on_a_module_is_reset_each_pass_not_retained(sandbox: Any) -> None:
    first = verified_diagnosis(sandbox, STATE_ON_A_MODULE, {"backward-twice-carried"}, 13,
                               "acc.trace = None")
    assert "retain_graph" not in (first.patch or "")


def test_a_graph_carried_across_passes_by_something_unseen_gets_no_retain_graph(
        sandbox: Any) -> None:
    # the carried value lives in a closure's list: the evidence shows the same backward()
    # failing on a later pass, not what carries the graph
    code = """import torch

w = torch.ones(3, requires_grad=True)
memory = [torch.zeros(3)]

def step(x):
    memory[0] = memory[0] * 0.9 + w * x
    return memory[0].sum()

for batch in range(3):
    loss = step(torch.randn(3))
    loss.backward()
"""
    first = first_diagnosis(sandbox, code)
    assert first.id == "backward-twice-carried" and first.root_line == 12
    assert "retain_graph=True" not in (first.patch or "")
    assert "Do not pass `retain_graph=True`" in first.fix.en
    assert "不要传入 `retain_graph=True`" in first.fix.zh


# -- a class called with the data ----------------------------------------------------------
def test_a_loss_class_called_with_tensors_is_built_first(sandbox: Any) -> None:
    code = """import torch
import torch.nn as nn

def score(pred, target):
    return nn.MSELoss(pred, target)

net = nn.Linear(3, 2)
x, y = torch.randn(4, 3), torch.randn(4, 2)
loss = score(net(x), y)
loss.backward()
"""
    first = verified_diagnosis(sandbox, code, {"module-called-with-tensors"}, 5,
                               "nn.MSELoss()(pred, target)")
    assert ".all()" not in shown_text(first)


# -- root cause over the data flow: shapes whose numbers relate ----------------------------
def test_a_batch_without_its_channel_dimension_is_not_read_as_channels(sandbox: Any) -> None:
    # (N, H, W) into Conv2d(1, ...): N became the channels; in_channels=N would run
    code = """import torch
import torch.nn as nn

def masks(n):
    return torch.rand(n, 12, 12)

seg = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 1, 1))
batch = masks(6)
out = seg(batch)
loss = ((out - torch.rand(6, 1, 12, 12)) ** 2).mean()
loss.backward()
"""
    first = verified_diagnosis(sandbox, code, {"conv-channels"}, 5, ".unsqueeze(1)")
    assert "Conv2d(6" not in (first.patch or "")
    assert any("6 samples became 6 channels" in step.en for step in first.chain)


def test_one_image_into_a_linear_layer_is_flattened_not_read_as_rows(sandbox: Any) -> None:
    code = """import torch
import torch.nn as nn

layer = nn.Linear(36, 5)

def classify(img):
    return layer(img).argmax(dim=-1)

picture = torch.rand(6, 6)
print(classify(picture))
"""
    first = verified_diagnosis(sandbox, code, {"linear-in-features"}, 7,
                               "img.reshape(1, -1)")
    assert "Linear(6" not in (first.patch or "")


def test_conv_maps_into_a_linear_layer_are_flattened_and_the_layer_sized(sandbox: Any) -> None:
    code = """import torch
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 5, 3), nn.MaxPool2d(2))
        self.head = nn.Linear(20, 2)

    def forward(self, x):
        return self.head(self.features(x))

net = Net()
net(torch.randn(4, 3, 10, 10)).sum().backward()
"""
    first = verified_diagnosis(sandbox, code, {"linear-in-features"}, 8, "5 * 4 * 4")
    assert "flatten(1)" in (first.patch or "") and "Linear(4," not in (first.patch or "")


# -- what a truth value was asked for ------------------------------------------------------
def test_a_count_of_matches_counts_elements_not_whole_batches(sandbox: Any) -> None:
    code = """import torch

guesses = torch.tensor([1, 0, 2, 2, 1, 0])
truth = torch.tensor([1, 1, 2, 0, 1, 0])
hits = 0
seen = 0
for start in range(0, 6, 3):
    g, t = guesses[start:start + 3], truth[start:start + 3]
    hits += 1 if g == t else 0
    seen += 1
print(hits / seen)
"""
    first = verified_diagnosis(sandbox, code, {"bool-ambiguous"}, 9, "(g == t).sum().item()")
    assert "seen += t.numel()" in (first.patch or "")
    assert ".all()" not in (first.patch or "")


def test_if_on_a_tensor_name_tests_presence(sandbox: Any) -> None:
    code = """import torch

def blend(x, extra=None):
    if extra:
        x = x + extra
    return x

print(blend(torch.ones(3), torch.ones(3)))
"""
    first = verified_diagnosis(sandbox, code, {"bool-ambiguous"}, 4, "extra is not None")
    assert ".all()" not in (first.patch or "")


# -- the type of what a failing line was given ---------------------------------------------
def test_numpy_of_a_list_of_losses_keeps_numbers_at_the_append(sandbox: Any) -> None:
    code = """import numpy as np
import torch

w = torch.zeros(2, requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1)
curve = []
for _ in range(4):
    err = ((w - 1) ** 2).sum()
    opt.zero_grad()
    err.backward()
    opt.step()
    curve.append(err)
print(np.array(curve))
"""
    first = verified_diagnosis(sandbox, code, {"numpy-of-loss-history"}, 12,
                               "curve.append(err.item())")
    assert "curve.detach()" not in shown_text(first)


def test_an_embedding_fed_an_embedding_is_not_told_to_use_long(sandbox: Any) -> None:
    code = """import torch
import torch.nn as nn

codes = nn.Sequential(nn.Embedding(5, 4), nn.Embedding(5, 4))
ids = torch.randint(0, 5, (3, 2))
print(codes(ids).shape)
"""
    first = first_diagnosis(sandbox, code)
    assert (first.id, first.root_line) == ("embedding-of-embedding", 4)
    assert "ids.long()" not in shown_text(first) and "nn.ModuleList" in first.fix.en


def test_a_fix_whose_trial_failed_is_not_the_advice(sandbox: Any) -> None:
    # the message's own advice would be `in_channels=3`: tried, it fails (line 6 sets a
    # one-channel weight), so the fix says where to look instead
    code = """import torch
import torch.nn as nn

photo = torch.rand(1, 3, 8, 8)
blur = nn.Conv2d(1, 1, 3, bias=False)
blur.weight.data = torch.full((1, 1, 3, 3), 1 / 9)
print(blur(photo).shape)
"""
    first = first_diagnosis(sandbox, code)
    assert first.fix_failed and "in_channels=3" not in first.fix.en
    assert "tried on your program and did not fix it" in first.fix.en
    assert "试过" in first.fix.zh


def test_a_dtype_is_fixed_where_the_data_is_made_not_where_it_is_sliced(sandbox: Any) -> None:
    # fixing the slice on line 9 would fail again on line 12, which reads `table` whole
    code = """import numpy as np
import torch

table = torch.from_numpy(np.random.rand(6, 2))
weight = torch.randn(2, 1, requires_grad=True)

def fit(rows):
    return (rows @ weight).pow(2).mean()

for start in range(0, 6, 3):
    part = table[start:start + 3]
    fit(part).backward()
print(fit(table).item())
"""
    verified_diagnosis(sandbox, code, {"dtype-mismatch"}, 4, "np.random.rand(6, 2)).float()")


def test_sequence_labels_longer_than_the_input_are_shifted_not_unflattened(
        sandbox: Any) -> None:
    code = """import torch
import torch.nn as nn

tokens = torch.randint(0, 12, (3, 7))
embed = nn.Embedding(12, 5)
head = nn.Linear(5, 12)
given = tokens[:, :-1]
scores = head(embed(given))
loss = nn.functional.cross_entropy(scores.reshape(-1, 12), tokens.view(-1))
loss.backward()
"""
    first = verified_diagnosis(sandbox, code, {"ce-batch-mismatch"}, 9,
                               "tokens[:, 1:].reshape(-1)")
    assert "mixes samples" not in shown_text(first)


def test_sequence_scores_with_classes_last_are_transposed_for_cross_entropy(
        sandbox: Any) -> None:
    code = """import torch
import torch.nn as nn

tagger = nn.Linear(6, 9)
words = torch.randn(2, 5, 6)
tags = torch.randint(0, 9, (2, 5))
loss = nn.CrossEntropyLoss()(tagger(words), tags)
loss.backward()
"""
    verified_diagnosis(sandbox, code, {"ce-classes-not-dim1"}, 7, "tagger(words).transpose(1, 2)")


def test_a_recurrent_layer_in_a_sequential_is_named_where_it_is_built(sandbox: Any) -> None:
    code = """import torch
import torch.nn as nn

net = nn.Sequential(nn.Linear(3, 4), nn.GRU(4, 4, batch_first=True), nn.Linear(4, 1))
print(net(torch.randn(2, 6, 3)).shape)
"""
    first = first_diagnosis(sandbox, code)
    assert (first.id, first.root_line) == ("tuple-in-sequential", 4)
    assert "`nn.GRU`" in first.title.en and "`nn.GRU`" in first.title.zh


# -- a silent program's fix must change what it prints --------------------------------------
def test_prints_the_same_compares_whole_runs_that_printed_numbers() -> None:
    def printed(text: str, outcome: str = "ok") -> RunResult:
        return _run(_param("net.w"), outcome=outcome).model_copy(update={"stdout": text})

    assert prints_the_same(printed("params: 2352\n"), printed("params: 2352"))
    assert not prints_the_same(printed("params: 2352\n"), printed("params: 1200\n"))
    assert not prints_the_same(printed("done\n"), printed("done\n"))  # no number to read
    assert not prints_the_same(printed("loss 3\n", "error"), printed("loss 3\n"))
    warned = printed("loss 3\n").model_copy(update={"warnings": [WarningInfo(
        category="UserWarning", message="Using a target size that is different")]})
    assert not prints_the_same(warned, printed("loss 3\n"))  # the warning is gone
    assert prints_the_same(warned, warned)
    cut = printed("loss 3\n")
    assert cut.evidence is not None
    budget_ended = cut.model_copy(update={"evidence": cut.evidence.model_copy(
        update={"cut": CutEvidence(line=10, backwards=2, steps=2)})})
    assert not prints_the_same(budget_ended, printed("loss 3\n"))


PRINTS_A_COUNT = """\
import torch
import torch.nn as nn

torch.manual_seed(0)
block = nn.Sequential(nn.Conv2d(4, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU())
layers = nn.ModuleList([block for _ in range(3)])
net = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), *layers, nn.Conv2d(4, 1, 3, padding=1))
opt = torch.optim.SGD(net.parameters(), lr=0.01)
for _ in range(3):
    x = torch.randn(4, 1, 8, 8)
    loss = ((net(x) - x) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print("trainable parameters:", sum(p.numel() for p in net.parameters()))
print("output shape:", tuple(net(torch.randn(2, 1, 8, 8)).shape))
"""


def test_a_fix_that_leaves_the_printed_numbers_as_they_were_is_not_the_cause(
    sandbox: Any,
) -> None:
    """The program prints a parameter count (one block shared three times); switching its
    BatchNorm to eval mode before the last line changes nothing it prints, so it is not
    shown as the cause of what the learner saw."""
    found = diagnose(PRINTS_A_COUNT, sandbox.run(PRINTS_A_COUNT), sandbox)
    assert all(not (d.fix_verified and d.id == "batchnorm-no-eval") for d in found), [
        (d.id, d.fix_check) for d in found]


UNTRIED_CAT = """\
import torch
import torch.nn as nn


class Fuse(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(12, 4)

    def forward(self, image_feat, text_feat):
        joined = torch.cat([image_feat, text_feat], dim=1)
        return self.proj(joined)


model = Fuse()
out = model(torch.randn(4, 8), torch.randn(5, 4))
print(out.shape)
"""


def test_an_untried_fix_picked_by_the_message_alone_is_not_given(sandbox: Any) -> None:
    """The message's catalog advice ("join along the dimension where they differ") was never
    tried on this program, and here it is wrong (the batches differ): the diagnosis says what
    the error means and where to look, in both languages, and gives no change."""
    first = diagnose(UNTRIED_CAT, sandbox.run(UNTRIED_CAT), sandbox)[0]
    assert first.id == "cat-size-mismatch" and first.fix_verified is None
    assert "dim=" not in first.fix.en and "none is given as the fix" in first.fix.en
    assert "不给出修改方法" in first.fix.zh and "第 11 行" in first.fix.zh


DISCARDED_MOVE = """import torch


def centred(points, origin):
    origin.to(points)
    shifted = points - origin
    return shifted @ torch.eye(3, dtype=torch.float32)


points = torch.rand(5, 3)
origin = torch.tensor([0.5, 0.5, 0.5], dtype=torch.float64)
print(centred(points, origin).shape)
"""


def test_a_conversion_on_a_line_of_its_own_is_the_cause_where_its_name_flows(
    sandbox: Any,
) -> None:
    """`origin.to(points)` changes nothing; the float64 `origin` reaches the matmul through
    `shifted`: the discarded conversion is the cause, and assigning it is tried."""
    result = sandbox.run(DISCARDED_MOVE)
    assert result.error is not None and result.error.line == 7
    found = diagnose(DISCARDED_MOVE, result, sandbox)
    first = found[0]
    assert (first.id, first.root_line, first.fix_verified) == ("conversion-discarded", 5, True)
    assert "origin = origin.to(points)" in (first.patch or "")
    assert all(d.id != "result-thrown-away" for d in found)  # not said twice


def test_a_step_between_two_backwards_of_one_forward_is_not_told_to_detach(
        sandbox: Any) -> None:
    # corpus15 nonsaturating-gan-shared-forward-zh, after its scoring: "detach the value the
    # two losses share" also cut the generator's loss off from the generator (judged wrong)
    code = """import torch
import torch.nn as nn

G, D = nn.Linear(2, 2), nn.Sequential(nn.Linear(2, 1))
opt_g, opt_d = torch.optim.SGD(G.parameters(), lr=0.1), torch.optim.SGD(D.parameters(), lr=0.1)
fake = G(torch.randn(8, 2))
score = D(fake)
d_loss = score.mean()
opt_d.zero_grad()
d_loss.backward(retain_graph=True)
opt_d.step()
g_loss = -score.mean()
opt_g.zero_grad()
g_loss.backward()
opt_g.step()
"""
    result = sandbox.run(code)
    assert result.outcome == "error"
    first = diagnose(code, result, sandbox)[0]
    assert "again after the step" in first.fix.en and "detach" not in first.fix.en, first.fix.en


def test_a_fix_after_which_an_optimizer_never_steps_hides_the_bug() -> None:
    """The step between two backward passes deleted to silence "modified by an inplace
    operation": the error goes, and so does all training of what that optimizer holds."""
    took = StepEvidence(optimizer="opt_enc", kind="SGD", n_params=2, after_backward=1)
    other = took.model_copy(update={"optimizer": "opt_head"})
    failed = _run(_param("enc.w"), outcome="error", steps=[took, other])
    said = hides_bug(failed, _run(_param("enc.w"), steps=[other, other]))
    assert said is not None and "`opt_enc` never takes a step" in said.en and said.zh
    assert hides_bug(failed, _run(_param("enc.w"), steps=[other, took, other, took])) is None
